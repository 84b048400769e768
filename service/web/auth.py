"""Who is calling: tenants, their API keys, keys derived from them for browsers and apps,
and the client's address behind a proxy.

A tenant is an app that uses the service (a game frontend, a rule checker). With `AUTH=keys`
every request to an operation carries one of its keys, as `Authorization: Bearer <key>` or
`X-API-Key: <key>` (an `Authorization` header of another scheme, such as a proxy's Basic
credentials, does not hide `X-API-Key`); with `AUTH=off` (the default of `make run`) every
request is the `anonymous` tenant. `service.web.frontdoor` applies this module to every
request the router sends to an operation, however its path is spelt.

The tenants file (`API_KEYS_FILE`, or the same JSON in `API_KEYS`) names each tenant, the
salted hashes of its keys, the browser origins that may use them and its quotas::

    {"tenants": [{"name": "acme",
                  "keys": [{"id": "3f9a1c7e", "hash": "sha256:<salt hex>:<digest hex>"},
                           {"id": "b2d4e6f8", "hash": "sha256:...", "revoked": true}],
                  "origins": ["https://play.acme.example"],
                  "quotas": {"scoring": "600/minute", "builds": "20/hour"}}]}

A key is ``yz_<id>_<secret>``: the id picks the entry (ids are not secret, as a Stripe key's
prefix is not), the secret is 32 random bytes. Only SHA-256 of a per-key random salt and the
key is stored, compared in constant time; 256 random bits need no slow hash to resist guessing.
`python -m service.web.auth new-key --tenant acme` makes a key and prints its entry.

`origins`: absent or empty, the key is for servers only (a request with an `Origin` header,
i.e. from a browser page, is refused with 403); `["*"]`, any origin. The service's own pages
are always allowed: same origin, the `Origin` is exactly ``<wsgi.url_scheme>://<Host>`` of
the request (gunicorn's scheme is https behind a trusted proxy that says so), so the scheme
counts as the host does (`gopher://<host>` is not the service's page).

**Derived keys** (as Algolia's secured API keys): a page or a mobile app cannot hold a secret
key, so the tenant's own server derives short-lived, restricted keys from one of its keys and
hands them out. A derived key is ``yzd_<payload>.<mac>``: the payload (base64url JSON) names
the parent key's id and the restrictions, the mac is HMAC-SHA256 over ``yzd_<payload>`` under
the parent key's derivation secret (HMAC-SHA256 of the text `DERIVE_LABEL` under the parent
key). The restrictions:

- `exp` (required): when it stops working, in Unix seconds, at most `DERIVED_MAX_SECONDS`
  ahead (no allowance beyond it);
- `ops`: the operation classes it may call (`scoring`, `advice`, `analysis`; default all);
- `user`: an end user's id; with `quotas` (per operation class, the `limits` notation) that
  user's own quotas, charged beside the tenant's;
- `origins`: the browser origins that may use it, within its tenant's.

The service verifies a derived key with no state and no call out: the parent's entry in the
tenants file holds the derivation secret (`"derive"`, only for keys made with `new-key
--derivable`: such a tenants file is then as secret as the keys). A derived key cannot be
widened (any change breaks the mac, which has one spelling; origins outside the tenant's
are refused), and it stops working when it expires or when its parent key is revoked.
`python -m service.web.auth derive` makes one; `derive_key` is the same in Python. A key is
read within bounds before it is decoded (ASCII, at most `DERIVED_MAX_LENGTH` characters, a
payload nested at most `PAYLOAD_MAX_DEPTH` deep): whatever a header holds, the answer is a
401 or 403, never a 5xx.

Keys are never logged: the tenant's name is what logs, metrics and problem documents carry.
A key in the URL is refused (401, saying where keys go and that the key is now leaked), and
logs and problem documents take out anything that looks like a key, wherever in the request
it came (`service.secrets.redact`).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from ..caller import ANONYMOUS, Caller
from ..config import Settings
from ..secrets import holds_key, redact
from .problems import TYPE_OPERATION_NOT_ALLOWED, TYPE_ORIGIN_NOT_ALLOWED, TYPE_UNAUTHORIZED
from .quotas import OPERATION_CLASSES, REQUEST_CLASSES, parse_quota

KEY_PREFIX = "yz_"
DERIVED_PREFIX = "yzd_"
#: What a key's derivation secret is the HMAC of, under the key.
DERIVE_LABEL = b"yahtzee-scoring derived keys v1"
#: The longest a derived key may live: its `exp` at most this many seconds ahead (no more:
#: a server deriving keys sets `exp` by its own clock within that, not at its edge).
DERIVED_MAX_SECONDS = 7 * 24 * 3600
#: The longest key taken, derived or not (a longer one is refused before it is read).
DERIVED_MAX_LENGTH = 4096
#: The deepest nesting of arrays and objects in a derived key's payload (a valid one is an
#: object of strings, ints, lists of strings and one object of strings: 2); a deeper one is
#: refused before it is parsed.
PAYLOAD_MAX_DEPTH = 3
#: Query parameters taken for a key sent in the URL (with AUTH=keys), by name: lowered,
#: without "_", "-" and "." (`api_key`, `apikey`, `api-key`, `X-API-Key`, `access_token`).
QUERY_KEY_NAMES = frozenset({"apikey", "xapikey", "key", "accesstoken", "token"})
#: The longest start of a query string whose parameters are read for keys (all of it is
#: searched for anything that looks like a key).
QUERY_SCAN = 8192
#: The realm named in WWW-Authenticate.
REALM = "yahtzee-scoring"
_KEY = re.compile(r"yz_([a-z0-9]{4,32})_([A-Za-z0-9_-]{16,128})")
# The mac: 32 bytes are 43 base64url characters, the last holding 4 bits and 2 unused ones,
# which must be 0 (as `_b64` writes them): one spelling per key, not four.
_DERIVED = re.compile(r"yzd_([A-Za-z0-9_-]{8,4000})\.([A-Za-z0-9_-]{42}[AEIMQUYcgkosw048])")
_QUERY_NAME_NOISE = re.compile(r"[_.\-]")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_USER = re.compile(r"[A-Za-z0-9._@:-]{1,128}")
_HASH = re.compile(r"sha256:([0-9a-f]{16,128}):([0-9a-f]{64})")
_DERIVE = re.compile(r"[0-9a-f]{64}")
#: Compared against when a key's id is unknown, so an unknown key costs what a known one does.
_DUMMY = (bytes(16), hashlib.sha256(b"").digest())


log = logging.getLogger(__name__)


class KeyFileError(ValueError):
    """The tenants file is not what docs/deploy.md describes (the message says where)."""


class Refused(Exception):
    """A request this module turns away: no key, an unknown, revoked, expired or malformed key
    (401), or a key used from an origin, or for an operation class, it may not be (403)."""

    def __init__(self, status: int, title: str, detail: str, type_: str,
                 tenant: str | None = None, error: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.type = status, title, detail, type_
        self.tenant = tenant
        self.headers: list[tuple[str, str]] = []
        if status == 401:
            challenge = f'Bearer realm="{REALM}"'
            if error:
                challenge += f', error="{error}"'
            self.headers.append(("WWW-Authenticate", challenge))


def _invalid(detail: str, title: str = "Invalid API key") -> Refused:
    return Refused(401, title, detail, TYPE_UNAUTHORIZED, error="invalid_token")


def _key_in_url() -> Refused:
    return Refused(401, "API key in the URL",
                   "API keys go in the 'Authorization: Bearer <key>' or 'X-API-Key: <key>' "
                   "header, never in the URL: proxies, servers and browsers write URLs down. "
                   "Treat this key as leaked and rotate it (a derived key: derive another; "
                   "revoke its parent key if it must stop working before it expires)",
                   TYPE_UNAUTHORIZED, error="invalid_request")


@dataclass(frozen=True)
class Tenant:
    """An app using the service: its name, its quota per operation class (the `limits`
    notation, defaults filled in) and the browser origins that may use its keys."""

    name: str
    quotas: Mapping[str, str]
    origins: frozenset[str] = field(default_factory=frozenset)
    anonymous: bool = False

    def allows_origin(self, origin: str, own: str | None,
                      origins: frozenset[str] | None = None) -> bool:
        """Whether a browser page at `origin` may use this tenant's keys (`origins`: a derived
        key's narrower list; else the tenant's own), or is one of the service's own pages:
        `own`, the origin the request was sent to (``<wsgi.url_scheme>://<Host>``), scheme,
        host and port alike (ASCII case aside)."""
        allowed = self.origins if origins is None else origins
        if self.anonymous or "*" in allowed or origin in allowed:
            return True
        return own is not None and origin.lower() == own.lower()

    def caller(self) -> Caller:
        """The identity of a request with one of this tenant's keys."""
        return Caller(self.name, self.name, keyed=True, quotas=self.quotas)


@dataclass(frozen=True)
class _KeyEntry:
    tenant: Tenant
    salt: bytes
    digest: bytes
    revoked: bool
    derive: bytes | None  # the derivation secret, for keys that may derive others
    caller: Caller


def hash_key(key: str, salt: bytes | None = None) -> str:
    """The stored form of a key: ``sha256:<salt hex>:<hex of SHA-256(salt + key)>``."""
    salt = os.urandom(16) if salt is None else salt
    return f"sha256:{salt.hex()}:{hashlib.sha256(salt + key.encode()).hexdigest()}"


def derive_secret(key: str) -> str:
    """A key's derivation secret, as the tenants file holds it (`"derive"`, hex): the
    HMAC-SHA256 of `DERIVE_LABEL` under the key."""
    return hmac.new(key.encode(), DERIVE_LABEL, hashlib.sha256).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh key and its id: ``yz_<8 hex digits>_<43 characters of base64url>``."""
    key_id = os.urandom(4).hex()
    secret = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    return key_id, f"{KEY_PREFIX}{key_id}_{secret}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    """The bytes of unpadded base64url text as `_b64` writes it, and only so: ValueError for
    other characters, padding, or unused bits that are not 0 (each value has one spelling)."""
    data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    if _b64(data) != text:
        raise ValueError("not canonical unpadded base64url")
    return data


def _too_deep(text: str, limit: int) -> bool:
    """Whether JSON text nests arrays and objects deeper than `limit` (brackets within
    strings not counted): asked before `json.loads`, which recurses once per level."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def _payload(text: str) -> Any:
    """A derived key's payload (base64url of UTF-8 JSON), decoded; ValueError for one that is
    not, or that nests deeper than `PAYLOAD_MAX_DEPTH`. Decoded as UTF-8 before the depth is
    counted: JSON in bytes may be UTF-16 or -32, whose bytes a count of brackets misreads."""
    text = _unb64(text).decode()
    if _too_deep(text, PAYLOAD_MAX_DEPTH):
        raise ValueError(f"nested deeper than {PAYLOAD_MAX_DEPTH}")
    return json.loads(text)


def derive_key(key: str, expires: int, operations: list[str] | None = None,
               user: str | None = None, origins: list[str] | None = None,
               quotas: Mapping[str, str] | None = None) -> str:
    """A key derived from `key` (a tenant's key made with `new-key --derivable`), restricted
    as the module docstring says; `expires` in Unix seconds. Raises ValueError for a
    restriction the service would refuse."""
    match = _KEY.fullmatch(key)
    if match is None:
        raise ValueError("key: not a tenant's key (yz_<id>_<secret>)")
    payload: dict[str, Any] = {"kid": match.group(1), "exp": int(expires)}
    if operations is not None:
        payload["ops"] = sorted(set(operations))
    if user is not None:
        payload["user"] = user
    if origins is not None:
        payload["origins"] = sorted({o.rstrip("/") for o in origins})
    if quotas:
        payload["quotas"] = dict(sorted(quotas.items()))
    _restrictions(payload, time.time())  # the service's own check
    body = DERIVED_PREFIX + _b64(json.dumps(payload, separators=(",", ":")).encode())
    secret = bytes.fromhex(derive_secret(key))
    return f"{body}.{_b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())}"


@dataclass(frozen=True)
class _Restrictions:
    key_id: str
    expires: int
    operations: frozenset[str] | None
    user: str | None
    origins: frozenset[str] | None
    quotas: Mapping[str, str]


def _restrictions(payload: Any, now: float) -> _Restrictions:
    """A derived key's restrictions, checked; ValueError says what is wrong."""
    if not isinstance(payload, dict):
        raise ValueError("its payload is not an object")
    unknown = sorted(set(payload) - {"kid", "exp", "ops", "user", "origins", "quotas"})
    if unknown:
        raise ValueError(f"unknown restriction {unknown[0]!r}")
    kid, exp = payload.get("kid"), payload.get("exp")
    if not isinstance(kid, str) or not re.fullmatch(r"[a-z0-9]{4,32}", kid):
        raise ValueError("kid: the parent key's id")
    if type(exp) is not int:
        raise ValueError("exp: Unix seconds")
    if exp > now + DERIVED_MAX_SECONDS:
        raise ValueError(f"exp: at most {DERIVED_MAX_SECONDS} s (7 days) ahead")
    ops = payload.get("ops")
    if ops is not None and (not isinstance(ops, list) or not ops
                            or not all(isinstance(o, str) for o in ops)
                            or not set(ops) <= set(REQUEST_CLASSES)):
        raise ValueError(f"ops: a non-empty list of {', '.join(REQUEST_CLASSES)}")
    user = payload.get("user")
    if user is not None and (not isinstance(user, str) or not _USER.fullmatch(user)):
        raise ValueError("user: 1-128 of [A-Za-z0-9._@:-]")
    origins = payload.get("origins")
    if origins is not None and (not isinstance(origins, list)
                                or not all(isinstance(o, str) and o for o in origins)):
        raise ValueError("origins: a list of origins such as 'https://app.example'")
    quotas = payload.get("quotas") or {}
    if not isinstance(quotas, dict):
        raise ValueError("quotas: an object of operation class -> quota")
    if quotas and user is None:
        raise ValueError("quotas: per-user quotas need a user")
    for name, text in quotas.items():
        if name not in OPERATION_CLASSES or not isinstance(text, str):
            raise ValueError(f"quotas: {name!r} -> a quota per operation class")
        parse_quota(text)
    return _Restrictions(kid, exp, None if ops is None else frozenset(ops), user,
                         None if origins is None else frozenset(origins), quotas)


def _fail(where: str, what: str) -> KeyFileError:
    return KeyFileError(f"tenants file: {where}: {what}")


def _quotas(raw: Any, where: str, defaults: Mapping[str, str]) -> dict[str, str]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _fail(where, "quotas must be an object of operation class -> quota")
    unknown = sorted(set(raw) - set(OPERATION_CLASSES))
    if unknown:
        raise _fail(where, f"unknown operation class {unknown[0]!r} (use "
                           f"{', '.join(OPERATION_CLASSES)})")
    out = dict(defaults)
    for name, text in raw.items():
        if not isinstance(text, str):
            raise _fail(f"{where}.{name}", "a quota is a string such as '600/minute'")
        try:
            parse_quota(text)
        except ValueError as exc:
            raise _fail(f"{where}.{name}", str(exc)) from None
        out[name] = text
    return out


def load_tenants(text: str, defaults: Mapping[str, str]) -> dict[str, _KeyEntry]:
    """Every key of a tenants file (JSON text), by key id, with its tenant; raises
    `KeyFileError` naming the first thing wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KeyFileError(f"tenants file: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("tenants"), list):
        raise KeyFileError('tenants file: expected {"tenants": [...]}')
    entries: dict[str, _KeyEntry] = {}
    names: set[str] = set()
    for i, raw in enumerate(data["tenants"]):
        where = f"tenants[{i}]"
        if not isinstance(raw, dict):
            raise _fail(where, "a tenant is an object")
        extra = sorted(set(raw) - {"name", "keys", "origins", "quotas"})
        if extra:
            raise _fail(where, f"unknown field {extra[0]!r}")
        name = raw.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name == ANONYMOUS:
            raise _fail(f"{where}.name", "1-64 of [A-Za-z0-9._-], not 'anonymous'")
        if name in names:
            raise _fail(f"{where}.name", f"tenant {name!r} is named twice")
        names.add(name)
        origins = raw.get("origins") or []
        if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
            raise _fail(f"{where}.origins", "a list of origins such as 'https://app.example'")
        tenant = Tenant(name, _quotas(raw.get("quotas"), f"{where}.quotas", defaults),
                        frozenset(o.rstrip("/") for o in origins))
        caller = tenant.caller()
        keys = raw.get("keys")
        if not isinstance(keys, list):
            raise _fail(f"{where}.keys", "a list of {id, hash} objects")
        for j, key in enumerate(keys):
            kw = f"{where}.keys[{j}]"
            if not isinstance(key, dict) or sorted(set(key) - {"id", "hash", "revoked",
                                                               "derive"}):
                raise _fail(kw, "an object with id, hash and optionally revoked, derive")
            key_id, hashed = key.get("id"), key.get("hash")
            if not isinstance(key_id, str) or not re.fullmatch(r"[a-z0-9]{4,32}", key_id):
                raise _fail(f"{kw}.id", "4-32 of [a-z0-9] (the part after 'yz_')")
            match = _HASH.fullmatch(hashed) if isinstance(hashed, str) else None
            if match is None:
                raise _fail(f"{kw}.hash", "sha256:<salt hex>:<64 hex digits> "
                                          "(python -m service.web.auth new-key)")
            if key_id in entries:
                raise _fail(f"{kw}.id", f"key id {key_id!r} is used twice")
            revoked = key.get("revoked", False)
            if not isinstance(revoked, bool):
                raise _fail(f"{kw}.revoked", "true or false")
            derive = key.get("derive")
            if derive is not None and not (isinstance(derive, str)
                                           and _DERIVE.fullmatch(derive)):
                raise _fail(f"{kw}.derive", "64 hex digits (python -m service.web.auth "
                                            "new-key --derivable)")
            entries[key_id] = _KeyEntry(tenant, bytes.fromhex(match.group(1)),
                                        bytes.fromhex(match.group(2)), revoked,
                                        bytes.fromhex(derive) if derive else None, caller)
    return entries


#: Most callers without keys remembered (by client address); beyond it they are made again.
ANONYMOUS_CALLERS = 4096


class Authenticator:
    """Names who a request comes from (`identify`), from the settings' tenants file."""

    def __init__(self, settings: Settings) -> None:
        self.enabled = settings.auth == "keys"
        self.anonymous = Tenant(ANONYMOUS, dict(settings.default_quotas), frozenset({"*"}),
                                anonymous=True)
        self.proxies = TrustedProxies(settings.forwarded_allow_ips)
        self._anonymous: dict[str, Caller] = {}  # by client address, without keys
        self.keys: dict[str, _KeyEntry] = {}
        if self.enabled:
            if settings.api_keys_file:
                try:
                    text = Path(settings.api_keys_file).read_text()
                except OSError as exc:
                    raise KeyFileError(f"API_KEYS_FILE: cannot read it ({exc.strerror})"
                                       ) from None
            elif settings.api_keys:
                text = settings.api_keys
            else:
                raise KeyFileError("AUTH=keys needs API_KEYS_FILE or API_KEYS (the tenants "
                                   "file, docs/deploy.md), or AUTH=off")
            self.keys = load_tenants(text, settings.default_quotas)

    def identify(self, environ: Mapping[str, Any], operation: str) -> Caller:
        """Who a request to an operation of class `operation` comes from; raises `Refused`
        (401, 403), and nothing else whatever the request holds.

        First, a key in the URL is refused (401 saying where keys go, `key_in_query`): with
        AUTH=keys anything in the query string that looks like a key, or a parameter named as
        keys are (`api_key`, `token`, ...); with AUTH=off, which reads no key, only what
        looks like one: a secret in a URL is leaked whether or not the service reads it. Then
        a key that cannot be read (not ASCII, too long, nested too deep, or failing in a way
        not foreseen) is a 401 invalid key, logged without the key."""
        try:
            query = environ.get("QUERY_STRING")
            if query and isinstance(query, str) and key_in_query(query, self.enabled):
                raise _key_in_url()
            if not self.enabled:
                return self._anonymous_caller(environ)
            return self._keyed(environ, operation)
        except Refused:
            raise
        except Exception as exc:  # a bug or a case not foreseen: the client's key, not a 500
            log.warning("API key refused: reading it failed",
                        extra={"error": type(exc).__name__, "operation": operation})
            raise _invalid("This API key is malformed") from None

    def _anonymous_caller(self, environ: Mapping[str, Any]) -> Caller:
        """The caller of a request without keys (AUTH=off): the anonymous tenant, counted by
        client address."""
        address = self.proxies.client(environ)
        caller = self._anonymous.get(address)
        if caller is None:  # a Caller is immutable: one per client address, kept
            if len(self._anonymous) >= ANONYMOUS_CALLERS:
                self._anonymous.clear()
            caller = self._anonymous[address] = Caller(
                ANONYMOUS, f"{ANONYMOUS}/{address}", quotas=self.anonymous.quotas)
        return caller

    def _keyed(self, environ: Mapping[str, Any], operation: str) -> Caller:
        """The caller named by the request's key (AUTH=keys), within its restrictions and its
        tenant's origins; `Refused` otherwise."""
        key = presented_key(environ)
        if key is None:
            raise Refused(401, "API key required",
                          "Send a key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
                          TYPE_UNAUTHORIZED)
        if len(key) > DERIVED_MAX_LENGTH or not key.isascii():
            raise _invalid(f"This API key is malformed (a key is at most {DERIVED_MAX_LENGTH} "
                           f"ASCII characters)")
        origins: frozenset[str] | None = None
        if key.startswith(DERIVED_PREFIX):
            entry, limits = self._derived(key)
            caller = Caller(entry.tenant.name, entry.tenant.name, keyed=True,
                            quotas=entry.tenant.quotas, user=limits.user,
                            user_quotas=limits.quotas, operations=limits.operations)
            origins = limits.origins
            if caller.operations is not None and operation not in caller.operations:
                raise Refused(403, "Operation not allowed",
                              f"This derived key may not call {operation} operations (it "
                              f"allows {', '.join(sorted(caller.operations))})",
                              TYPE_OPERATION_NOT_ALLOWED, tenant=caller.tenant)
        else:
            entry = self._entry(key)
            caller = entry.caller
        origin = environ.get("HTTP_ORIGIN")
        if origin:
            host = environ.get("HTTP_HOST")
            own = f"{environ.get('wsgi.url_scheme') or 'http'}://{host}" if host else None
            if not entry.tenant.allows_origin(origin.rstrip("/"), own, origins):
                raise Refused(403, "Origin not allowed",
                              f"This key may not be used from a page at "
                              f"{redact(origin[:200])}",
                              TYPE_ORIGIN_NOT_ALLOWED, tenant=entry.tenant.name)
        return caller

    def _entry(self, key: str) -> _KeyEntry:
        """The entry of a tenant's own key; `Refused` for an unknown or revoked one."""
        match = _KEY.fullmatch(key)
        entry = self.keys.get(match.group(1)) if match else None
        salt, digest = (entry.salt, entry.digest) if entry else _DUMMY
        same = hmac.compare_digest(hashlib.sha256(salt + key.encode()).digest(), digest)
        if entry is None or not same:
            raise Refused(401, "Unknown API key", "This API key is not one of the service's",
                          TYPE_UNAUTHORIZED, error="invalid_token")
        if entry.revoked:
            raise Refused(401, "Revoked API key", "This API key was revoked; use the "
                          "tenant's new key", TYPE_UNAUTHORIZED, error="invalid_token")
        return entry

    def _derived(self, key: str) -> tuple[_KeyEntry, _Restrictions]:
        """A derived key's parent entry and restrictions, verified; `Refused` (401) for a
        malformed, forged, widened or expired one, or one whose parent is revoked."""
        match = _DERIVED.fullmatch(key) if len(key) <= DERIVED_MAX_LENGTH else None
        if match is None:
            raise _invalid("This derived key is malformed (yzd_<payload>.<mac>)")
        try:
            payload = _payload(match.group(1))
            mac = _unb64(match.group(2))
        except (ValueError, binascii.Error):
            raise _invalid("This derived key is malformed (yzd_<payload>.<mac>)") from None
        kid = payload.get("kid") if isinstance(payload, dict) else None
        entry = self.keys.get(kid) if isinstance(kid, str) else None
        secret = entry.derive if entry is not None and entry.derive else bytes(32)
        body = key[:match.end(1)].encode()
        same = hmac.compare_digest(hmac.new(secret, body, hashlib.sha256).digest(), mac)
        if entry is None or entry.derive is None or not same:
            raise _invalid("This derived key was not derived from a key of the service's "
                           "that may derive keys", "Unknown API key")
        now = time.time()
        try:
            limits = _restrictions(payload, now)
        except ValueError as exc:
            raise _invalid(f"This derived key's restrictions are not valid: {exc}") from None
        if entry.revoked:
            raise _invalid("The key this key was derived from was revoked",
                           "Revoked API key")
        if limits.expires <= now:
            raise _invalid("This derived key expired", "Expired API key")
        allowed = entry.tenant.origins
        if limits.origins is not None and "*" not in allowed and not limits.origins <= allowed:
            raise _invalid("This derived key names origins its tenant does not allow")
        return entry, limits


def key_in_query(query: str, named: bool = True) -> bool:
    """Whether a query string carries an API key: anything that looks like one
    (`service.secrets.holds_key`), as sent or once percent-decoded, in a parameter's name or
    value; with `named`, also a parameter named as keys are (`QUERY_KEY_NAMES`) with a value
    that is not blank. Only the first `QUERY_SCAN` characters are split into parameters."""
    if holds_key(query):
        return True
    for name, value in parse_qsl(query[:QUERY_SCAN], keep_blank_values=True):
        if holds_key(name) or holds_key(value):
            return True
        bare = _QUERY_NAME_NOISE.sub("", name.strip().lower())
        if named and bare in QUERY_KEY_NAMES and value.strip():
            return True
    return False


def presented_key(environ: Mapping[str, Any]) -> str | None:
    """The key in `Authorization: Bearer` (first) or `X-API-Key`, else None. An
    `Authorization` header of another scheme (a proxy's Basic credentials) or a Bearer with
    nothing after it does not hide `X-API-Key`."""
    header = environ.get("HTTP_AUTHORIZATION")
    if header:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    key = environ.get("HTTP_X_API_KEY")
    return key.strip() if key and key.strip() else None


# --- the client's address behind proxies -------------------------------------------------
class TrustedProxies:
    """The peers whose X-Forwarded-For is believed (FORWARDED_ALLOW_IPS: addresses, networks,
    or "*"), and the client address they name."""

    def __init__(self, spec: tuple[str, ...]) -> None:
        self.any = "*" in spec
        self.networks = tuple(ipaddress.ip_network(s, strict=False) for s in spec if s != "*")
        self.trusted = functools.lru_cache(maxsize=4096)(self._trusted)

    def _trusted(self, address: str) -> bool:
        if self.any:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.networks)

    def client(self, environ: Mapping[str, Any]) -> str:
        """The client's address: the peer's, unless the peer is a trusted proxy; then the
        nearest address in X-Forwarded-For that is not a trusted proxy's (a client's own,
        forged entries lie further left and are never reached)."""
        peer = environ.get("REMOTE_ADDR") or ""
        forwarded = environ.get("HTTP_X_FORWARDED_FOR")
        if not forwarded or not self.trusted(peer):
            return peer
        client = peer
        for hop in reversed(forwarded.split(",")):
            hop = hop.strip()
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                break  # not an address: the proxy chain says no more
            client = hop
            if not self.trusted(hop):
                break
        return client


def main(argv: list[str] | None = None) -> int:
    """The command line:

    - `python -m service.web.auth new-key --tenant NAME [--derivable]`: print, as one JSON
      object, a new key (shown this once: only its hash is kept) and the entry to add to the
      tenant's `keys` in the tenants file (with `--derivable`, its derivation secret too);
    - `python -m service.web.auth derive --expires-in SECONDS [--operations scoring,advice]
      [--user ID] [--origin URL]... [--quota CLASS=QUOTA]...`: print a key derived from the
      key in `YAHTZEE_API_KEY` (or read from standard input), for a page or an app to hold.
    """
    parser = argparse.ArgumentParser(prog="python -m service.web.auth",
                                     description="Make API keys for the tenants file, and "
                                                 "short-lived keys derived from them.")
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("new-key", help="make a key; print it and its entry")
    make.add_argument("--tenant", required=True, help="the tenant's name")
    make.add_argument("--derivable", action="store_true",
                      help="the key may derive restricted keys (its entry holds the secret "
                           "that verifies them)")
    derive = sub.add_parser("derive", help="print a restricted key derived from a key")
    derive.add_argument("--expires-in", type=int, default=3600, metavar="SECONDS",
                        help=f"seconds it works for (default 3600, at most "
                             f"{DERIVED_MAX_SECONDS})")
    derive.add_argument("--operations", help="operation classes it may call, comma-separated "
                                             f"({', '.join(REQUEST_CLASSES)}; default all)")
    derive.add_argument("--user", help="the end user it is for (per-user quotas)")
    derive.add_argument("--origin", action="append", help="a browser origin that may use it "
                                                          "(repeat; within the tenant's)")
    derive.add_argument("--quota", action="append", metavar="CLASS=QUOTA",
                        help="the user's own quota of an operation class, e.g. "
                             "scoring=60/minute (repeat; needs --user)")
    args = parser.parse_args(argv)
    if args.command == "new-key":
        if not _NAME.fullmatch(args.tenant) or args.tenant == ANONYMOUS:
            parser.error("--tenant: 1-64 of [A-Za-z0-9._-], not 'anonymous'")
        key_id, key = new_key()
        entry = {"id": key_id, "hash": hash_key(key)}
        if args.derivable:
            entry["derive"] = derive_secret(key)
        print(json.dumps({"tenant": args.tenant, "key": key, "entry": entry}))
        return 0
    parent = os.environ.get("YAHTZEE_API_KEY") or sys.stdin.readline()
    quotas = {}
    for item in args.quota or []:
        name, sep, text = item.partition("=")
        if not sep:
            parser.error(f"--quota {item!r}: CLASS=QUOTA, e.g. scoring=60/minute")
        quotas[name.strip()] = text.strip()
    operations = ([o.strip() for o in args.operations.split(",") if o.strip()]
                  if args.operations else None)
    try:
        print(derive_key(parent.strip(), int(time.time()) + args.expires_in, operations,
                         args.user, args.origin, quotas))
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())

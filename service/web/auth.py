"""Who is calling: tenants, their API keys, and the client's address behind a proxy.

A tenant is an app that uses the service (a game frontend, a rule checker). With `AUTH=keys`
every `/v1/` request carries one of its keys, as `Authorization: Bearer <key>` or
`X-API-Key: <key>`; with `AUTH=off` (the default of `make run`) every request is the
`anonymous` tenant. `/healthz`, `/readyz`, `/metrics`, the pages for people and
`/openapi.json` need no key (`service.web.tenancy` applies this module to `/v1/` only).

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
(same origin: the `Origin`'s host is the request's `Host`) are always allowed.

Keys are never logged: the tenant's name is what logs, metrics and problem documents carry.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import hmac
import ipaddress
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from .problems import TYPE_ORIGIN_NOT_ALLOWED, TYPE_UNAUTHORIZED
from .quotas import OPERATION_CLASSES, parse_quota

KEY_PREFIX = "yz_"
ANONYMOUS = "anonymous"
#: The realm named in WWW-Authenticate.
REALM = "yahtzee-scoring"
_KEY = re.compile(r"yz_([a-z0-9]{4,32})_([A-Za-z0-9_-]{16,128})")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_HASH = re.compile(r"sha256:([0-9a-f]{16,128}):([0-9a-f]{64})")
#: Compared against when a key's id is unknown, so an unknown key costs what a known one does.
_DUMMY = (bytes(16), hashlib.sha256(b"").digest())


class KeyFileError(ValueError):
    """The tenants file is not what docs/deploy.md describes (the message says where)."""


class Refused(Exception):
    """A request this module turns away: no key, an unknown or revoked key (401), or a key
    used from an origin its tenant does not allow (403)."""

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


@dataclass(frozen=True)
class Tenant:
    """An app using the service: its name, its quota per operation class (the `limits`
    notation, defaults filled in) and the browser origins that may use its keys."""

    name: str
    quotas: Mapping[str, str]
    origins: frozenset[str] = field(default_factory=frozenset)
    anonymous: bool = False

    def allows_origin(self, origin: str, host: str | None) -> bool:
        """Whether a browser page at `origin` may use this tenant's keys (its own list, or
        the service's own pages: same host)."""
        if self.anonymous or "*" in self.origins or origin in self.origins:
            return True
        return host is not None and origin.partition("://")[2] == host


@dataclass(frozen=True)
class _KeyEntry:
    tenant: Tenant
    salt: bytes
    digest: bytes
    revoked: bool


def hash_key(key: str, salt: bytes | None = None) -> str:
    """The stored form of a key: ``sha256:<salt hex>:<hex of SHA-256(salt + key)>``."""
    salt = os.urandom(16) if salt is None else salt
    return f"sha256:{salt.hex()}:{hashlib.sha256(salt + key.encode()).hexdigest()}"


def new_key() -> tuple[str, str]:
    """A fresh key and its id: ``yz_<8 hex digits>_<43 characters of base64url>``."""
    import base64

    key_id = os.urandom(4).hex()
    secret = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    return key_id, f"{KEY_PREFIX}{key_id}_{secret}"


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
        keys = raw.get("keys")
        if not isinstance(keys, list):
            raise _fail(f"{where}.keys", "a list of {id, hash} objects")
        for j, key in enumerate(keys):
            kw = f"{where}.keys[{j}]"
            if not isinstance(key, dict) or sorted(set(key) - {"id", "hash", "revoked"}):
                raise _fail(kw, "an object with id, hash and optionally revoked")
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
            entries[key_id] = _KeyEntry(tenant, bytes.fromhex(match.group(1)),
                                        bytes.fromhex(match.group(2)), revoked)
    return entries


class Authenticator:
    """Names the tenant of a request (`identify`), from the settings' tenants file."""

    def __init__(self, settings: Settings) -> None:
        self.enabled = settings.auth == "keys"
        self.anonymous = Tenant(ANONYMOUS, dict(settings.default_quotas), frozenset({"*"}),
                                anonymous=True)
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

    def identify(self, environ: Mapping[str, Any]) -> Tenant:
        """The tenant a request comes from; raises `Refused` (401, 403)."""
        if not self.enabled:
            return self.anonymous
        key = _presented_key(environ)
        if key is None:
            raise Refused(401, "API key required",
                          "Send a key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
                          TYPE_UNAUTHORIZED)
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
        origin = environ.get("HTTP_ORIGIN")
        if origin and not entry.tenant.allows_origin(origin.rstrip("/"),
                                                     environ.get("HTTP_HOST")):
            raise Refused(403, "Origin not allowed",
                          f"This key may not be used from a page at {origin[:200]}",
                          TYPE_ORIGIN_NOT_ALLOWED, tenant=entry.tenant.name)
        return entry.tenant


def _presented_key(environ: Mapping[str, Any]) -> str | None:
    """The key in `Authorization: Bearer` (first) or `X-API-Key`, else None."""
    header = environ.get("HTTP_AUTHORIZATION")
    if header:
        scheme, _, value = header.strip().partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else None
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
    """`python -m service.web.auth new-key --tenant NAME`: print, as one JSON object, a new
    key (shown this once: only its hash is kept) and the entry to add to the tenant's `keys`
    in the tenants file."""
    parser = argparse.ArgumentParser(prog="python -m service.web.auth",
                                     description="Make API keys for the tenants file.")
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("new-key", help="make a key; print it and its entry")
    make.add_argument("--tenant", required=True, help="the tenant's name")
    args = parser.parse_args(argv)
    if not _NAME.fullmatch(args.tenant) or args.tenant == ANONYMOUS:
        parser.error("--tenant: 1-64 of [A-Za-z0-9._-], not 'anonymous'")
    key_id, key = new_key()
    print(json.dumps({"tenant": args.tenant, "key": key,
                      "entry": {"id": key_id, "hash": hash_key(key)}}))
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())

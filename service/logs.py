"""Structured logs: one JSON object per line (LOG_FORMAT=json), or one line of text for
people (LOG_FORMAT=text), each carrying the request id of the request it was written in.

Used by the app (`service.web.ops.init_ops` calls `configure_logging`), by gunicorn
(`gunicorn.conf.py` routes `gunicorn.error` and `gunicorn.access` through these formatters)
and by the advisor's build process, so every line on stdout has the same shape:

    {"time":"...","level":"INFO","logger":"...","message":"...","request_id":"..."}

`request_id` is there only on lines written while handling a request. gunicorn's access
lines add method, path, query, status, duration_ms, bytes, remote_addr, user_agent and the
caller's tenant; their request id is the X-Request-ID response header that
`service.web.ops` sets on every response.
No line carries an API key: the access line's path, query and user agent, and any other
line's message, extra fields and traceback (gunicorn's own quote the request line) go
through `service.secrets.redact`.
This module imports no web framework at import time, so gunicorn's config can load it early;
`AccessAtomsLogger` is gunicorn's logger class.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
from gunicorn import glogging

from .caller import current_caller
from .secrets import redact

#: Marks the handler `configure_logging` installs, so calling it again replaces, not adds.
_HANDLER_NAME = "service-json-stdout"

# Attributes every LogRecord has; anything else on a record came from `extra=` and is logged.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "request_id",
    "tenant",
}


#: The id of the request being handled (set by `service.web.ops.OpsMiddleware`). A context
#: variable: each thread, and each greenlet under gevent, sees its own request's.
REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request being handled here, if any."""
    return REQUEST_ID.get()


class RequestIdFilter(logging.Filter):
    """Puts `request_id` on every record (None outside a request) so formatters can use it;
    the formatters leave it out of lines where it is None."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = current_request_id()
        if getattr(record, "tenant", None) is None:  # the tenant of a keyed request
            caller = current_caller()
            record.tenant = caller.tenant if caller is not None and caller.keyed else None
        return True


def _redacted(value: Any) -> Any:
    """A logged value with anything that looks like an API key taken out (strings only)."""
    return redact(value) if isinstance(value, str) else value


def _access_fields(atoms: Mapping[str, Any]) -> dict[str, Any]:
    """Fields of a gunicorn access record, from gunicorn's atoms (see its glogging.atoms;
    `AccessAtomsLogger` makes just these); what the client sent that may hold an API key
    (path, query, user agent) redacted. An atom gunicorn gives as "-" is None."""
    get = atoms.get
    fields: dict[str, Any] = {}
    for field, key in _ACCESS_ATOMS:
        value = get(key)
        fields[field] = None if value is None or value == "-" else value
    status, duration = fields["status"], fields["duration_ms"]
    if status is not None:
        fields["status"] = int(status)
    if duration is not None:
        fields["duration_ms"] = int(duration)
    for field in ("path", "query", "user_agent"):
        value = fields[field]
        if type(value) is str:
            fields[field] = redact(value)
    fields["query"] = fields["query"] or None
    return fields


#: An access line's fields and the gunicorn atoms they are made of, in the line's order.
_ACCESS_ATOMS = (
    ("method", "m"), ("path", "U"), ("query", "q"), ("status", "s"), ("duration_ms", "M"),
    ("bytes", "B"), ("remote_addr", "h"), ("user_agent", "a"),
    ("request_id", "{x-request-id}o"), ("tenant", "{service.tenant}e"),
)


#: The last second `_iso_time` wrote: (its timestamp, its text to the second).
_second: tuple[int, str] = (-1, "")


def _iso_time(created: float) -> str:
    """`datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")`, the
    second's text made once a second (a line's time took 1.5 us of its 7)."""
    global _second
    if created < 0:  # before 1970 (not met outside tests)
        return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    second = int(created)
    micro = round((created - second) * 1e6)  # fromtimestamp's rounding: half to even
    if micro >= 1_000_000:
        second, micro = second + 1, micro - 1_000_000
    last, text = _second
    if second != last:
        text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second = (second, text)
    return f"{text}.{micro // 1000:03d}+00:00"


def _json_line(doc: dict[str, Any]) -> str:
    """One JSON object on one line: orjson (a tenth of the standard library's time, and
    every access line pays it), values it cannot write as their `str`; the standard
    library's encoder for what orjson refuses (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(doc, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(doc, default=str, ensure_ascii=False)


class AccessAtomsLogger(glogging.Logger):
    """gunicorn's logger (`logger_class` in gunicorn.conf.py), making for an access record
    only the atoms the formatters here read (`_access_fields`). gunicorn's own `atoms` makes
    one for every request header, every response header and every WSGI environ entry (some
    sixty a request, each one's key formatted and lowered) and the time in Apache's format,
    which a JSON line never shows: some two-fifths of the access line's cost. The values are
    gunicorn's, one for one (the X-Request-ID response header, the caller's tenant in the
    environ); a formatter that asks for an atom not made here gets "-", as from gunicorn."""

    def access(self, resp: Any, req: Any, environ: Mapping[str, Any],
               request_time: Any) -> None:
        """gunicorn's access line: the same record (its atoms, wrapped as gunicorn wraps
        them, with gunicorn's access format as its message), handed to the access logger's
        handlers at once (`Logger.makeRecord` and `Logger.handle`, logging's public API)
        instead of through `Logger.info`, whose search of the stack for the caller's file
        and line no formatter here shows. Nothing when gunicorn logs no access line."""
        logger = self.access_log
        # (`access_log_enabled`: gunicorn 27's; before it, the record goes to the handlers
        # there are)
        if not logger.isEnabledFor(logging.INFO) or not getattr(
                self, "access_log_enabled", True):
            return
        try:
            atoms = self.atoms_wrapper_class(self.atoms(resp, req, environ, request_time))
            logger.handle(logger.makeRecord(logger.name, logging.INFO, __file__, 0,
                                            self.cfg.access_log_format, (atoms,), None))
        except Exception:
            self.error(traceback.format_exc())

    def atoms(self, resp: Any, req: Any, environ: Mapping[str, Any],
              request_time: Any) -> dict[str, Any]:
        """The access record's atoms that `_access_fields` reads."""
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        atoms = {
            "h": environ.get("REMOTE_ADDR", "-"),
            "s": status,
            "m": environ.get("REQUEST_METHOD"),
            "U": environ.get("PATH_INFO"),
            "q": environ.get("QUERY_STRING"),
            "B": getattr(resp, "sent", None),
            "a": environ.get("HTTP_USER_AGENT", "-"),
            "M": request_time.seconds * 1000 + int(request_time.microseconds / 1000),
        }
        headers = resp.headers
        for name, value in headers.items() if hasattr(headers, "items") else headers:
            if name.lower() == "x-request-id":  # the last one, as gunicorn's dict keeps
                atoms["{x-request-id}o"] = value
        if "service.tenant" in environ:
            atoms["{service.tenant}e"] = environ["service.tenant"]
        return atoms


class _RedactingFormatter(logging.Formatter):
    """A formatter whose tracebacks and stacks have no API key in them (`redact`)."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        """The traceback, redacted."""
        return redact(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's name
        """The stack, redacted."""
        return redact(super().formatStack(stack_info))


class JsonFormatter(_RedactingFormatter):
    """Formats a record as one line of JSON: time, level, logger, message, request_id, extras."""

    def format(self, record: logging.LogRecord) -> str:
        access = record.name == "gunicorn.access" and isinstance(record.args, Mapping)
        doc: dict[str, Any] = {
            "time": _iso_time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": "request" if access else redact(record.getMessage()),
        }
        request_id = getattr(record, "request_id", None)
        if request_id is not None:
            doc["request_id"] = request_id
        tenant = getattr(record, "tenant", None)
        if tenant is not None:
            doc["tenant"] = tenant
        if access:
            fields = _access_fields(record.args)  # type: ignore[arg-type]
            doc["message"] = f"{fields['method']} {fields['path']} {fields['status']}"
            for name in ("request_id", "tenant"):
                if fields[name] is None:
                    del fields[name]
            doc.update(fields)
        attributes = vars(record)
        if attributes.keys() - _RESERVED:  # extra fields (most records have none)
            for key, value in attributes.items():
                if key not in _RESERVED and not key.startswith("_"):
                    doc[key] = _redacted(value)
        if record.exc_info:
            doc["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            doc["stack_info"] = self.formatStack(record.stack_info)
        return _json_line(doc)


class TextFormatter(_RedactingFormatter):
    """Lines for people (LOG_FORMAT=text, `make run`): time, level, logger, the request id in
    brackets inside a request, the message, then any extra fields as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        access = record.name == "gunicorn.access" and isinstance(record.args, Mapping)
        extras: dict[str, Any] = {}
        if access:
            fields = _access_fields(record.args)  # type: ignore[arg-type]
            record = logging.makeLogRecord(vars(record))  # a copy: other handlers see it too
            record.request_id = fields.pop("request_id")
            line = (f"{fields['method']} {fields['path']} {fields['status']} "
                    f"{fields['duration_ms']} ms")
            if fields["tenant"] is not None:
                line += f" tenant={fields['tenant']}"
            record.msg, record.args = line.replace("%", "%%"), None
        else:
            extras = {k: v for k, v in vars(record).items()
                      if k not in _RESERVED and not k.startswith("_")}
            if getattr(record, "tenant", None) is not None:
                extras["tenant"] = record.tenant
        request_id = getattr(record, "request_id", None)
        text = super().format(record)
        if request_id is not None:
            head, _, tail = text.partition(f" {record.name} ")
            text = f"{head} {record.name} [{request_id}] {tail}"
        if extras:
            text += " " + redact(" ".join(f"{k}={v}" for k, v in extras.items()))
        return text

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        """The line's head and message, redacted (an access line's fields already are)."""
        return redact(super().formatMessage(record))


def make_handler(log_format: str = "json") -> logging.Handler:
    """A stdout handler with the request-id filter and the chosen formatter."""
    handler = logging.StreamHandler(sys.stdout)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(TextFormatter() if log_format == "text" else JsonFormatter())
    return handler


def configure_logging(level: str = "INFO", log_format: str = "json") -> None:
    """Send the root logger to stdout in the chosen format. Safe to call more than once."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    root.addHandler(make_handler(log_format))
    root.setLevel(level.upper())
    # No line shows a process, a thread or a task, so records do not collect them (logging's
    # documented switches): each record, every request's access line included, asked the
    # process id (a system call) and its thread's object and name (under gevent, the
    # greenlet's), about 0.9 us of a record's 2.7.
    logging.logProcesses = logging.logMultiprocessing = logging.logThreads = False
    logging.logAsyncioTasks = False  # (Python 3.12 and later; unread before)

"""Who a request comes from: decided once per request by the web layer's front door
(`service.web.frontdoor`), on the router's reading of the request, and read from here by
every other concern: quotas, the fair share of a pod, the table build queue's per-client
limit and turns, metrics, log lines and problem documents.

Nothing else derives an identity of its own (from a path, a header or the peer's address):
`current_caller()` is the one answer, and it is None outside a request to an operation (the
command line, warming tables, the pages for people).

This module imports nothing of the service, so that every layer may read it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

#: The tenant name of requests without API keys (AUTH=off).
ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Caller:
    """The identity of one request.

    - `tenant`: the tenant's name (`anonymous` with AUTH=off).
    - `keyed`: whether it carries a tenant's key (log lines and problem documents name the
      tenant only then).
    - `client`: the tenant-wide key that quotas, the fair share of a pod and table builds
      count under: the tenant's name, or ``anonymous/<client address>`` without keys.
    - `user`: the end user a derived key names (its per-user quotas count under
      ``<tenant>/user/<user>``), else None.
    - `quotas`: the tenant's quota of each operation class (the `limits` notation).
    - `user_quotas`: a derived key's per-user quotas, by operation class.
    - `operations`: the operation classes a derived key allows (None: every class).
    """

    tenant: str
    client: str
    keyed: bool = False
    quotas: Mapping[str, str] = field(default_factory=dict)
    user: str | None = None
    user_quotas: Mapping[str, str] = field(default_factory=dict)
    operations: frozenset[str] | None = None

    @property
    def user_client(self) -> str | None:
        """The key a derived key's per-user quotas count under, or None."""
        return None if self.user is None else f"{self.tenant}/user/{self.user}"


CALLER: ContextVar[Caller | None] = ContextVar("caller", default=None)


def current_caller() -> Caller | None:
    """The identity of the request being handled here (None outside one)."""
    return CALLER.get()


#: What the request being handled does around a wait for something other than the CPU
#: (`waiting`): set by the front door to give the caller's turn in its fair share of the pod
#: to its next request meanwhile, and to take a turn again after.
PAUSE: ContextVar[tuple[Callable[[], None], Callable[[], None]] | None] = ContextVar(
    "pause", default=None)


#: The request's one budget for waiting on tables being built (`wait_until`): a list the
#: front door sets empty for each request, holding the deadline once a first wait began.
WAITS: ContextVar[list[float] | None] = ContextVar("waits", default=None)


def wait_until(wait: float) -> float:
    """When a wait for a table being built gives up (monotonic seconds): `wait` seconds after
    the request's first such wait, so that all of a request's waits (the value tables, then
    an analysis table) share one ADVISOR_BUILD_WAIT; `wait` from now outside a request."""
    now = time.monotonic()
    budget = WAITS.get()
    if budget is None:
        return now + wait
    if not budget:
        budget.append(now + wait)
    return budget[0]


@contextmanager
def waiting() -> Iterator[None]:
    """Around a wait that holds no CPU (polling for a table the build process makes): the
    caller's other requests may be answered meanwhile. Nothing outside a request."""
    pause = PAUSE.get()
    if pause is None:
        yield
        return
    pause[0]()
    try:
        yield
    finally:
        pause[1]()

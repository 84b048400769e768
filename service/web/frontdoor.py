"""The front door: every request is routed once, by the app's own router, and every request
the router sends to an operation is, before it is answered, identified (`auth`), charged to
its tenant's quota (`quotas`) and admitted within its tenant's fair share of the pod
(`fairshare`), whatever the spelling of its path.

Who is calling is decided here, once, on the router's reading of the request: the route
(`Router.route`, werkzeug's match of the app's URL map, bound as Flask binds it) says
whether the request reaches an operation and which operation class it is (each resource's
blueprint declares its class: `openapi.new_blueprint`). Flask then takes the same route
instead of matching again (`adapters.RoutedRequestContext`), and so does the scoring fast path
(`fast.ScoringFastPath`). So `//v1/...`, an absolute-form target, percent-encoded letters,
or any other spelling the router serves as an operation is an operation here too; a spelling
the router does not serve (a 404, a 405, a redirect to the canonical path) reaches no
operation and needs no key.

For each request to an operation, `FrontDoor`:
- names the caller (`service.caller.Caller`, set for the request: quotas, the build queue's
  per-client limit and turns, log lines and problem documents read it from there;
  `environ["service.tenant"]` for gunicorn's access line), or answers 401/403
  (`auth.Refused`) as problem+json;
- charges the operation class's quotas one unit (`quotas.Quotas.charge`), or answers 429
  (`quotas.QuotaExceeded`); the request's bill (`quotas.BILL`) takes a batch's other items
  when its body is read (`quotas.charge_batch`);
- admits it within the caller's in-flight cap in this worker (`fairshare.FairShare`), or
  answers 429 after a short wait (`fairshare.TooManyInFlight`); a wait for a table being
  built gives the place up meanwhile (`service.caller.waiting`). Admitted, it takes its
  turn among the worker's connections when one is due (`fairshare.take_turn`), as every
  other request does before it runs;
- adds `RateLimit-Policy` and `RateLimit` (what is left) to the answer, and counts it in
  `tenant_requests_total` (what it was charged in the end: `tenant_charged_units_total`).

It is WSGI middleware inside the ops layer (request ids, CORS, metrics: its answers carry
those too; CORS preflights are answered there, without credentials, as browsers send them)
and before the scoring fast path and Flask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from flask import Flask, Request, Response
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule

from ..caller import CALLER, PAUSE, WAITS
from .auth import Authenticator, Refused
from .fairshare import FairShare, TooManyInFlight, take_turn
from .openapi import deprecation_of
from .problems import (
    PROBLEM_MEDIA_TYPE,
    TYPE_QUOTA_EXCEEDED,
    TYPE_TOO_MANY_IN_FLIGHT,
    problem_document,
    problem_response,
)
from .quotas import BILL, QuotaExceeded, Quotas
from .tally import TALLY

REQUESTS = TALLY.counter(
    "tenant_requests",
    "Requests to operations by tenant (configured tenants, `anonymous` without keys, "
    "`unauthenticated` for requests with no valid key), operation class and status (401, "
    "403 and 429 included).",
    ["tenant", "operation", "status"],
)
UNAUTHENTICATED = "unauthenticated"
#: Most clients whose `PAUSE` callbacks are kept; beyond it they are made again.
PAUSES = 4096
#: The WSGI environ's key of a request's route (`Route`).
ROUTE = "service.route"
#: Most routes remembered (by method and path): the variants times the operations, with
#: room to spare; beyond it the memory is emptied and fills again.
ROUTE_CACHE = 4096


@dataclass(frozen=True, slots=True)
class Route:
    """Where the router sends a request: a rule and its arguments, or the routing error
    (404, 405, a redirect to the canonical path); `operation` is the operation class when
    the rule is an operation's, else None."""

    rule: Rule | None
    args: dict[str, Any] | None
    error: HTTPException | None
    operation: str | None
    #: the headers announcing the operation's deprecation (`openapi.Deprecation`), if any
    deprecation: tuple[tuple[str, str], ...] = ()


class Router:
    """The app's routing, done once per request: what Flask's own request context would
    match (`Flask.create_url_adapter` on the request, then `match`), kept in the environ
    (`ROUTE`) for every later concern. Matches are remembered by method and path, which is
    all they depend on here (the app uses neither host matching nor subdomains); routing
    errors are not."""

    def __init__(self, app: Flask) -> None:
        if app.url_map.host_matching or app.subdomain_matching:
            raise RuntimeError("the router remembers routes by method and path only")
        self.app = app
        self.operations: dict[str, str] = {}
        self.deprecations: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        for rule in app.url_map.iter_rules():
            blueprint = app.blueprints.get(rule.endpoint.rpartition(".")[0])
            operation = getattr(blueprint, "operation_class", None)
            if operation is not None:
                self.operations[rule.endpoint] = operation
            for method in rule.methods or ():
                found = deprecation_of(app.view_functions.get(rule.endpoint), method)
                if found is not None:
                    self.deprecations[(rule.endpoint, method)] = found.headers()
        self._cache: dict[tuple[str, str], Route] = {}

    def route(self, environ: dict[str, Any]) -> Route:
        """The request's route (matched once; kept in `environ[ROUTE]`)."""
        route = environ.get(ROUTE)
        if route is not None:
            return route
        key = (environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""))
        route = self._cache.get(key)
        if route is None:
            try:
                adapter = self.app.create_url_adapter(Request(environ))
                rule, args = adapter.match(return_rule=True)  # type: ignore[union-attr]
            except HTTPException as exc:
                route = Route(None, None, exc, None)
            else:
                route = Route(rule, args, None, self.operations.get(rule.endpoint),
                              self.deprecations.get((rule.endpoint, key[0]), ()))
                if len(self._cache) >= ROUTE_CACHE:
                    self._cache.clear()
                self._cache[key] = route
        environ[ROUTE] = route
        return route


class FrontDoor:
    """WSGI middleware: identity, quotas and fair share for every request the router sends
    to an operation (module docstring)."""

    def __init__(self, wsgi_app: Any, router: Router, auth: Authenticator, quotas: Quotas,
                 fair: FairShare) -> None:
        self.wsgi_app, self.router, self.auth = wsgi_app, router, auth
        self.quotas, self.fair = quotas, fair
        self._children: dict[tuple[str, str, int], Any] = {}
        # client -> what a request of it does around a wait (`service.caller.PAUSE`)
        self._pauses: dict[str, tuple[Callable[[], None], Callable[[], None]]] = {}

    def _count(self, tenant: str, operation: str, status: int) -> None:
        key = (tenant, operation, status)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = REQUESTS.labels(tenant, operation, str(status))
        child.inc()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        route = self.router.route(environ)
        if route.deprecation:  # on every answer of a deprecated operation, refusals too
            start_response = partial(_announce, start_response, route.deprecation)
        operation = route.operation
        if operation is None:  # no operation: a page, health, a 404, 405 or redirect
            take_turn()  # its turn among the worker's connections, when due
            return self.wsgi_app(environ, start_response)
        try:
            caller = self.auth.identify(environ, operation)
        except Refused as refused:
            self._count(refused.tenant or UNAUTHENTICATED, operation, refused.status)
            if refused.tenant is not None:
                environ["service.tenant"] = refused.tenant
            return self._problem(start_response, environ, refused.status, refused.title,
                                 refused.detail, refused.type, refused.headers, refused.tenant)
        environ["service.tenant"] = caller.tenant
        named = caller.tenant if caller.keyed else None
        try:
            bill = self.quotas.charge(caller, operation)
        except QuotaExceeded as exc:
            self._count(caller.tenant, operation, 429)
            return self._problem(start_response, environ, 429, "Quota exceeded", exc.detail,
                                 TYPE_QUOTA_EXCEEDED, exc.headers, named)
        token = CALLER.set(caller)
        try:
            self.fair.admit(caller.client, caller.tenant)
        except BaseException as exc:
            # refused, or ended while it waited (its greenlet killed): charged nothing
            CALLER.reset(token)
            self.quotas.refund(bill)
            if not isinstance(exc, TooManyInFlight):
                raise
            self._count(caller.tenant, operation, 429)
            return self._problem(start_response, environ, 429, "Too many requests in flight",
                                 exc.detail, TYPE_TOO_MANY_IN_FLIGHT,
                                 [("Retry-After", str(exc.retry_after)), *bill.headers()],
                                 named)
        client = caller.client
        pause = self._pauses.get(client)
        if pause is None:
            if len(self._pauses) >= PAUSES:
                self._pauses.clear()
            pause = self._pauses[client] = (partial(self.fair.release, client),
                                            partial(self.fair.resume, client))
        paused = PAUSE.set(pause)
        billed = BILL.set(bill)
        waits = WAITS.set([])  # the request's one budget for waiting on tables
        status = [0]

        def tenant_start_response(status_line: str, headers: list[tuple[str, str]],
                                  exc_info: Any = None) -> Any:
            status[0] = int(status_line[:3])
            # what is left, on every answer; a 429 of a quota met inside (a batch's items,
            # a build) carries the refusing quota's own
            for name, _ in headers:
                if name == "RateLimit":
                    break
            else:
                headers.extend(bill.headers())
            return start_response(status_line, headers, exc_info)

        try:
            return self.wsgi_app(environ, tenant_start_response)
        finally:
            self.fair.release(client)
            WAITS.reset(waits)
            BILL.reset(billed)
            PAUSE.reset(paused)
            CALLER.reset(token)
            if status[0] == 429:  # refused inside (a batch's items, a build): charged nothing
                self.quotas.refund(bill)
            self.quotas.settle(bill)
            self._count(caller.tenant, operation, status[0])

    @staticmethod
    def _problem(start_response: Any, environ: dict[str, Any], status: int, title: str,
                 detail: str, type_: str, headers: list[tuple[str, str]],
                 tenant: str | None) -> list[bytes]:
        body = problem_document(status, title, detail, type_, environ.get("PATH_INFO", ""),
                                tenant=tenant)
        start_response(f"{status} {_REASONS[status]}",
                       [("Content-Type", PROBLEM_MEDIA_TYPE),
                        ("Content-Length", str(len(body))), *headers])
        return [body]


_REASONS = {401: "Unauthorized", 403: "Forbidden", 429: "Too Many Requests"}


def _announce(start_response: Any, announced: tuple[tuple[str, str], ...], status_line: str,
              headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
    """start_response with the headers of a deprecated operation (`Route.deprecation`)."""
    return start_response(status_line, [*headers, *announced], exc_info)


def register_quota_handlers(app: Flask) -> None:
    """Answer a build over its caller's `builds` quota (`quotas.QuotaExceeded`, raised when
    the build queue asks `Quotas.admit_build`) as the 429 the front door gives."""

    @app.errorhandler(QuotaExceeded)
    def _exceeded(err: QuotaExceeded) -> Response:
        # (a batch over its items' quota too: `quotas.charge_batch`)
        return problem_response(429, "Quota exceeded", err.detail, TYPE_QUOTA_EXCEEDED,
                                headers=dict(err.headers))

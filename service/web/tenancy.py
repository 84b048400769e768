"""Every `/v1/` request, before it is answered: whose it is (`auth`), whether its tenant has
quota left for it (`quotas`), and who any table build it queues is for.

`TenantMiddleware` is WSGI middleware between the ops layer (request ids, CORS, metrics:
its answers carry those too) and the API (the scoring fast path, then Flask), so the
cheapest requests pay for it without Flask's dispatch. Paths outside `/v1/` (health,
readiness, metrics, the pages, the OpenAPI document) and CORS preflights (answered by the
ops layer, without credentials, as browsers send them) pass untouched.

For each `/v1/` request it:
- names the tenant (`environ["service.tenant"]`, gunicorn's access line shows it), or
  answers 401/403 (`auth.Refused`) as problem+json;
- charges the operation class's quota, under the tenant's name, or for the anonymous tenant
  under the client's address (from `X-Forwarded-For` only behind a trusted proxy), or
  answers 429 (`quotas.QuotaExceeded`);
- sets who builds are queued for (`build_process.BUILD_CLIENT`: the same key, so the build
  queue's per-client limit and its turn-taking are per tenant) and who they are charged to
  (`quotas.CALLER`), and the tenant that log lines and problem documents name
  (`service.logs.TENANT`, keyed tenants only);
- adds `RateLimit-Policy` to the answer and counts it in `tenant_requests_total`.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response
from prometheus_client import Counter

from ..advisor.tables.build_process import BUILD_CLIENT
from ..config import Settings
from ..logs import TENANT
from .auth import Authenticator, Refused, TrustedProxies
from .problems import (
    PROBLEM_MEDIA_TYPE,
    TYPE_QUOTA_EXCEEDED,
    problem_document,
    problem_response,
)
from .quotas import CALLER, QuotaExceeded, Quotas, operation_class

REQUESTS = Counter(
    "tenant_requests_total",
    "API requests by tenant (configured tenants, `anonymous` without keys, "
    "`unauthenticated` for requests with no valid key), operation class and status (401, "
    "403 and 429 included).",
    ["tenant", "operation", "status"],
)
UNAUTHENTICATED = "unauthenticated"


class TenantMiddleware:
    """WSGI middleware applying keys and quotas to `/v1/` requests (module docstring)."""

    def __init__(self, wsgi_app: Any, settings: Settings, auth: Authenticator,
                 quotas: Quotas) -> None:
        self.wsgi_app, self.auth, self.quotas = wsgi_app, auth, quotas
        self.proxies = TrustedProxies(settings.forwarded_allow_ips)
        self._children: dict[tuple[str, str, int], Any] = {}

    def _count(self, tenant: str, operation: str, status: int) -> None:
        key = (tenant, operation, status)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = REQUESTS.labels(tenant, operation, str(status))
        child.inc()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO") or ""
        if not path.startswith("/v1/") and path != "/v1":
            return self.wsgi_app(environ, start_response)
        operation = operation_class(path)
        try:
            tenant = self.auth.identify(environ)
        except Refused as refused:
            self._count(refused.tenant or UNAUTHENTICATED, operation, refused.status)
            if refused.tenant is not None:
                environ["service.tenant"] = refused.tenant
            return self._problem(start_response, environ, refused.status, refused.title,
                                 refused.detail, refused.type, refused.headers, refused.tenant)
        name = tenant.name
        environ["service.tenant"] = name
        key = f"anonymous/{self.proxies.client(environ)}" if tenant.anonymous else name
        try:
            policy = self.quotas.charge(name, operation, tenant.quotas[operation], key)
        except QuotaExceeded as exc:
            self._count(name, operation, 429)
            return self._problem(start_response, environ, 429, "Quota exceeded", exc.detail,
                                 TYPE_QUOTA_EXCEEDED, exc.headers,
                                 None if tenant.anonymous else name)
        status = [0]

        def tenant_start_response(status_line: str, headers: list[tuple[str, str]],
                                  exc_info: Any = None) -> Any:
            status[0] = int(status_line[:3])
            if policy:
                headers.append(("RateLimit-Policy", policy))
            return start_response(status_line, headers, exc_info)

        tokens = (TENANT.set(None if tenant.anonymous else name),
                  CALLER.set((name, tenant.quotas["builds"], key)), BUILD_CLIENT.set(key))
        try:
            return self.wsgi_app(environ, tenant_start_response)
        finally:
            TENANT.reset(tokens[0])
            CALLER.reset(tokens[1])
            BUILD_CLIENT.reset(tokens[2])
            self._count(name, operation, status[0])

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


def register_quota_handlers(app: Flask) -> None:
    """Answer a build over its tenant's `builds` quota (`quotas.QuotaExceeded`, raised when
    the build queue asks `Quotas.admit_build`) as the 429 the middleware gives."""

    @app.errorhandler(QuotaExceeded)
    def _exceeded(err: QuotaExceeded) -> Response:
        return problem_response(429, "Quota exceeded", err.detail, TYPE_QUOTA_EXCEEDED,
                                headers=dict(err.headers))

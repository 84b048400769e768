"""Where the web layer reaches past a library's documented API: here only, each reach
pinned by tests/web/test_adapters.py to the versions the lock files hold, so that an upgrade
that moves it fails there, by name, before anything else does.

- **Flask's request context** (`flask.ctx.RequestContext`, which Flask documents as internal,
  and whose main branch has merged it into the application context): `RoutedRequestContext`
  takes the route the front door already matched (`frontdoor.Router`) instead of matching
  the URL again. `ServiceFlask.request_context` (a documented method) makes it. Without it,
  every request would be matched twice, once by the front door that decides who is calling
  and once by Flask, and the two could disagree; the front door reads the request once.

The other extension points the web layer uses are documented ones: `Flask.ensure_sync`
(overridable), custom marshmallow fields (`_serialize`, as marshmallow's docs say to write
one) and a gunicorn worker class overriding `run` (service/web/worker.py; gunicorn's
`Worker` attributes it uses are pinned too).
"""

from __future__ import annotations

from flask.ctx import RequestContext

from .frontdoor import ROUTE


class RoutedRequestContext(RequestContext):
    """Flask's request context, taking the route the front door's router found for this
    request (`frontdoor.Router`: the same match, made once) instead of matching again."""

    def match_request(self) -> None:
        """The route in the environ, else Flask's own match."""
        route = self.request.environ.get(ROUTE)
        if route is None:
            super().match_request()
        elif route.error is not None:
            self.request.routing_exception = route.error
        else:
            self.request.url_rule, self.request.view_args = route.rule, dict(route.args)

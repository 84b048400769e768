"""The web layer's reaches past a library's documented API (service/web/adapters.py), pinned
to the versions the lock files hold: an upgrade that moves one fails here, by name."""

from __future__ import annotations

import inspect
from importlib.metadata import version

import flask.ctx
from gunicorn.workers.ggevent import GeventWorker
from packaging.version import Version

from service.config import Settings
from service.web.adapters import RoutedRequestContext
from service.web.app import create_app
from service.web.worker import ServiceWorker


def test_flask_still_has_the_request_context_the_adapter_extends():
    assert Version("3.0") <= Version(version("flask")) < Version("3.2"), (
        "Flask moved: check RoutedRequestContext against flask.ctx (its main branch merges "
        "RequestContext into AppContext), then widen this pin")
    assert issubclass(RoutedRequestContext, flask.ctx.RequestContext)
    assert "match_request" in vars(flask.ctx.RequestContext)
    assert list(inspect.signature(flask.ctx.RequestContext.match_request).parameters) == [
        "self"]


def test_the_front_door_route_is_the_one_flask_dispatches():
    """The route the front door matched is the one the view runs under (a request the front
    door could not route gets Flask's own 404/405, as a problem document)."""
    client = create_app(Settings()).test_client()
    assert client.get("/v1/variants/yacht").status_code == 200
    assert client.get("/v1/variants/nope").status_code == 404
    assert client.delete("/v1/variants/yacht").status_code == 405


def test_the_worker_class_uses_what_gunicorns_worker_still_has():
    assert Version("22.0") <= Version(version("gunicorn")) < Version("28"), (
        "gunicorn moved: check ServiceWorker.run against GeventWorker.run, then widen this pin")
    assert issubclass(ServiceWorker, GeventWorker) and "run" in vars(ServiceWorker)
    source = inspect.getsource(GeventWorker.run)
    for attribute in ("self.sockets", "self.worker_connections", "self.alive", "self.notify",
                      "self.cfg"):
        assert attribute in source or attribute in inspect.getsource(GeventWorker)
    for method in ("handle", "handle_exit", "handle_quit", "notify"):
        assert callable(getattr(GeventWorker, method, None)), method

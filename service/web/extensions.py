"""What the app factory (`app.create_app`, the composition root) puts in `app.extensions` for
the resources to use: the advisor and the analyst, made once per app from its settings."""

from __future__ import annotations

from flask import Flask

from ..advisor import Advisor
from ..advisor.analysis.analyst import Analyst


def advisor_of(app: Flask) -> Advisor:
    """The advisor an app was built with."""
    return app.extensions["advisor"]


def analyst_of(app: Flask) -> Analyst:
    """The analyst an app was built with."""
    return app.extensions["analyst"]

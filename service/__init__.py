"""Scoring and strategy service for the Yahtzee family of dice games.

Three layers, one folder each: `service.domain` (dice, boxes, variants, rules, scoring; pure
Python), `service.advisor` (the optimal-move solver and its tables; numpy and numba, no web),
and `service.web` (the Flask application: `service.web.app.create_app`). `service.config`
holds every setting; the entry points (the app factory, gunicorn.conf.py, the advisor's
command line) read it and pass what each part needs.
"""

__version__ = "4.0.0"

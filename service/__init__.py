"""Scoring and strategy service for the Yahtzee family of dice games.

The domain core (dice, boxes, variants, rules, scoring, advisor) has no web imports;
`service.api` is the HTTP layer and `service.app.create_app` the application factory.
"""

__version__ = "1.0.0"

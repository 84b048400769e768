"""Optimal move advisor: expected-score-maximising solitaire strategy for every variant.

- `suggest(rs, dice, throw, sheet)`: the best keep or box for a position, every alternative
  with its expected final score and regret (see `service.advisor.advice`);
- `status()`: built-in variant id -> whether its value table is ready;
- `warm(variants)`: build or load tables at start-up;
- ``python -m service.advisor build [variant ...]`` writes tables to ``$ADVISOR_TABLE_DIR``.

Exact for every 5-dice, one-column variant; column sheets and Maxi Yatzy use documented
approximations (`service.advisor.tables`) and say ``exact: false``. A game won at once
(Generala servida, General de boca) is valued at its box score like any other placement: the
solver maximises the expected score, and the suggestion reports ``wins_game: true``.
"""

from .advice import Action, Suggestion, suggest
from .tables import status, strategy, warm

__all__ = ["Action", "Suggestion", "status", "strategy", "suggest", "warm"]

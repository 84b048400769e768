"""Optimal move advisor: expected-score-maximising solitaire strategy for every variant.

- `Advisor(table_dir, cache_size, threads)` (`engine.py`): `suggest(rs, dice, throw, sheet)`
  gives the best keep or box of a position and every alternative with its expected final
  score and regret; `status()` says which built-in tables are ready; `warm(variants)` builds
  or loads them at start-up;
- ``python -m service.advisor build [variant ...]`` writes the built-in tables.

How it is organised: `model.py` compiles a RuleSet to arrays, `kernel.py` holds the numba
kernels, `solver.py` solves one sheet by backward induction, `methods/` decides which sheets
a RuleSet is solved as (one module per method: exact, columns, sections), `builder.py`
builds a strategy, `store.py` keeps tables on disk, `cache.py` in memory, `positions.py`
reads a sheet as table states, `advice.py` ranks the moves of a position.

Exact for every 5-dice, one-column variant; column sheets and Maxi Yatzy use documented
approximations and say ``exact: false``. A game won at once (Generala servida, General de
boca) is valued at its box score like any other placement: the solver maximises the expected
score, and the suggestion reports ``wins_game: true``.
"""

from .advice import Action, Suggestion
from .engine import Advisor

__all__ = ["Action", "Advisor", "Suggestion"]

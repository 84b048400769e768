"""Optimal move advisor: expected-score-maximising solitaire strategy for every variant.

- `Advisor(table_dir, cache_size, threads)` (`advice/advisor.py`): `suggest(rs, dice,
  throw, sheet)` gives the best keep or box of a position and every move with its
  expected final score and regret; `status()` says which built-in tables are ready;
  `warm(variants)` builds or loads them at start-up;
- ``python -m service.advisor build [variant ...]`` writes the built-in tables.

How it is organised, in sub-packages by job; each imports only those before it
(tests/test_layers.py checks it):

- `kernels/`: a RuleSet compiled to arrays (`model.py`) and the numba kernels over them:
  the solver's values (`values.py`), float64 moments, the policy, a turn, the exact
  distribution, win tables, games of the advisor's play, and their thread pool;
- `solving/`: one sheet solved by backward induction (`solver.py`), the parts a RuleSet is
  solved as and how (`strategy.py`, `methods/`: exact, columns, sections), a sheet read as
  part states (`positions.py`);
- `tables/`: tables on disk and the chain of stores (`store.py`), what a strategy's and a
  part's moment tables are as files (`strategies.py`), one cache for every kind of table
  (`cache.py`), and the pod's build process (`build_process.py`);
- `advice/`: the moves of a position ranked (`moves.py`) and the `Advisor` (`advisor.py`);
- `analysis/`: the `Analyst` (position values, distributions, coaching: `analyst.py`),
  recorded games analysed (`games.py`), a turn in two moments (`turn_view.py`), games of
  the advisor's play from a position (`simulate.py`);
- `objectives/`: what a position's moves are ranked by, one module each, registered in
  `advice/objective.py`: `score` (the default), `win` (playing to win, and each player's
  chance of finishing first), `target` (the chance of reaching a total); `utility.py`
  values moves under a utility of the final total.

Exact for every 5-dice, one-column variant; column sheets and Maxi Yatzy use documented
approximations and say ``exact: false``. A game won at once (Generala servida, General de
boca) is valued at its box score like any other placement by the solver, which maximises the
expected score (the suggestion reports ``wins_game: true``); the win probabilities, the
winning move and the computer players count it as the win it is (`kernels/winprob.py`), and
game analysis as the best move, regret 0, ending every player's game (`analysis/games.py`).
"""

from . import objectives  # noqa: F401  (every objective registered: see objectives/)
from .advice.advisor import Advisor
from .advice.moves import RankedMove, Suggestion

__all__ = ["Advisor", "RankedMove", "Suggestion"]

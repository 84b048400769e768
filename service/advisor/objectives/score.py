"""The `score` objective, the default: the moves ranked by expected final score, as the
advisor ranks them (`advice.moves.suggest`); it adds nothing to the request or the answer."""

from __future__ import annotations

from ..advice.objective import Objective, register


class Score(Objective):
    """Maximise the expected final score (solitaire play)."""

    name = "score"
    description = "`score`, the expected final score (default)"


SCORE = register(Score())

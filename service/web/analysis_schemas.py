"""Schemas of the analysis resources (positions/value, games/analyze, games/win-probability,
and the coaching fields of moves/suggest): the public contract of issue 10's endpoints.

Kept apart from `schemas.py` (the scoring endpoints' contract) so that the two can change
without touching each other; they share its field types and scorecard schema.
"""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from ..domain.variants import ALL_BOX_IDS
from .schemas import (
    _FAST_HAND,
    MAX_THROW,
    MAX_VALUE,
    EchoRulesSchema,
    HandScoreRequestSchema,
    RulesRequestFields,
    ScorecardSchema,
    StrictSchema,
    _bool,
    _fast,
    _int,
    dice_field,
)

MAX_THRESHOLDS = 50
MAX_PLAYERS = 8
MAX_TURNS = 80  # 52 turns of a column sheet, with room for mistakes to be reported on
MAX_THROWS_PER_TURN = MAX_THROW


# --------------------------------------------------------------------------- coaching


class MoveSuggestRequestSchema(HandScoreRequestSchema):
    """A position to advise on; `coach` adds where each keep's turn is likely to end."""

    fast_load = _fast({**_FAST_HAND, "coach": lambda v: type(v) is bool}, ("dice",))
    coach = _bool(metadata={
        "description": "Add to every keep the probability that the turn ends with points in "
                       "each box and the expected points of the turn (under the advisor's "
                       "play of the rest of the turn)"})


class BoxChanceSchema(ma.Schema):
    """The chance that the turn ends with points in one box."""

    box = fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS))
    column = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Column number (1-4) on a column sheet, else null"})
    probability = fields.Float(required=True)


class TurnOutlookSchema(ma.Schema):
    """Where the turn ends after a keep, under the advisor's play of the rest of it."""

    expected_points = fields.Float(required=True, metadata={
        "description": "Expected points this turn adds to the sheet (box score and bonuses)"})
    boxes_with_points = fields.List(fields.Nested(BoxChanceSchema), required=True, metadata={
        "description": "Every box the turn may end in with a non-zero score, most likely "
                       "first (e.g. P(YAHTZEE this turn | keep 3-3-3)); the rest of the "
                       "probability is a scratch"})


# --------------------------------------------------------------------------- positions


class PositionValueRequestSchema(RulesRequestFields):
    """A position: a scorecard at the start of a turn, or with the dice after a throw."""

    scorecard = fields.Nested(ScorecardSchema)
    dice = dice_field(metadata={"description": "The dice now (mid-turn); needs `throw`"})
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn the dice stand on (1 = first); required with dice"})
    em_baixo = _bool(metadata={"description": "Bozó: the dice count by their bottom faces"})
    at_least = fields.List(_int(0, MAX_VALUE), validate=validate.Length(max=MAX_THRESHOLDS),
                           metadata={"description": "Totals t for which P(final >= t) is "
                                                    "wanted"})
    histogram = _bool(metadata={"description": "Add the whole distribution"})


class ScoreChanceSchema(ma.Schema):
    """A total and a probability."""

    score = fields.Integer(required=True)
    probability = fields.Float(required=True)


class PercentilesSchema(ma.Schema):
    """Percentiles of the final total: the smallest t with P(final <= t) >= q %."""

    p5 = fields.Integer(required=True, data_key="5")
    p25 = fields.Integer(required=True, data_key="25")
    p50 = fields.Integer(required=True, data_key="50")
    p75 = fields.Integer(required=True, data_key="75")
    p95 = fields.Integer(required=True, data_key="95")


class DistributionSchema(ma.Schema):
    """The distribution of the final total, and how it was obtained."""

    exact = fields.Boolean(required=True, metadata={
        "description": "Computed exactly (forward pass over every reachable state); false: "
                       "sampled from games of the advisor's play (see samples)"})
    method = fields.String(required=True)
    samples = fields.Integer(allow_none=True, required=True)
    standard_error = fields.Float(allow_none=True, required=True, metadata={
        "description": "Standard error of the sampled mean (null when exact)"})
    mean = fields.Float(required=True)
    sd = fields.Float(required=True)
    min = fields.Integer(required=True)
    max = fields.Integer(required=True)
    percentiles = fields.Nested(PercentilesSchema, required=True)
    at_least = fields.List(fields.Nested(ScoreChanceSchema), required=True, metadata={
        "description": "P(final >= score) for each total asked"})
    histogram = fields.List(fields.Nested(ScoreChanceSchema), metadata={
        "description": "Every total with a non-zero probability (on request)"})


class PositionValueSchema(ma.Schema):
    """What a position is worth under the advisor's play."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    exact = fields.Boolean(required=True, metadata={
        "description": "Mean and sd are exact (exact method); false for the approximate "
                       "methods, whose figures come from games of their own play"})
    method = fields.String(required=True, metadata={"description": "The advisor's method"})
    throw = fields.Integer(allow_none=True, required=True)
    dice = fields.List(fields.Integer(), allow_none=True, required=True)
    current_total = fields.Integer(required=True)
    expected_final_score = fields.Float(required=True)
    sd = fields.Float(required=True, metadata={
        "description": "Standard deviation of the final total (exact second moment)"})
    distribution = fields.Nested(DistributionSchema, required=True)


# --------------------------------------------------------------------------- games


class ThrowSchema(StrictSchema):
    """One throw of a turn."""

    dice = dice_field(required=True)
    kept = fields.List(fields.Integer(strict=True, validate=validate.Range(1, 6)),
                       validate=validate.Length(max=5), metadata={
                           "description": "The dice kept from this throw for the next one "
                                          "(fewer than all). Needed for keeps to be judged; "
                                          "without it only the turn's placement is judged"})


class TurnSchema(StrictSchema):
    """One turn as played."""

    throws = fields.List(fields.Nested(ThrowSchema), required=True,
                         validate=validate.Length(1, MAX_THROWS_PER_TURN))
    box = fields.String(validate=validate.OneOf(ALL_BOX_IDS), allow_none=True, metadata={
        "description": "The box written; null or absent only when the turn wins the game at "
                       "once (Generala servida)"})
    column = _int(1, 4, metadata={"description": "Column written (column sheets)"})


class PlayerGameSchema(StrictSchema):
    """One player's game."""

    name = fields.String(validate=validate.Length(max=100))
    scorecard = fields.Nested(ScorecardSchema, metadata={
        "description": "The sheet the turns start from (default: empty)"})
    turns = fields.List(fields.Nested(TurnSchema), required=True,
                        validate=validate.Length(max=MAX_TURNS))


class GameAnalyzeRequestSchema(RulesRequestFields):
    """A game as played: players, each a list of turns, each its throws and box."""

    players = fields.List(fields.Nested(PlayerGameSchema), required=True,
                          validate=validate.Length(1, MAX_PLAYERS))


class ChoiceSchema(ma.Schema):
    """A keep or a placement."""

    action = fields.String(required=True, validate=validate.OneOf(("keep", "score")))
    dice = fields.List(fields.Integer(), metadata={"description": "keep: the dice kept"})
    box = fields.String(validate=validate.OneOf(ALL_BOX_IDS))
    column = fields.Integer(allow_none=True)
    score = fields.Integer()
    five_of_a_kind_bonus = fields.Integer()
    upper_bonus = fields.Integer()


class DecisionSchema(ma.Schema):
    """One decision: the position, the choice, the best choice, their values."""

    turn = fields.Integer(required=True)
    throw = fields.Integer(required=True)
    dice = fields.List(fields.Integer(), required=True)
    choice = fields.Nested(ChoiceSchema, required=True)
    best = fields.Nested(ChoiceSchema, required=True)
    expected_final_score = fields.Float(required=True, metadata={
        "description": "Expected final total after the choice, under optimal play after it"})
    sd = fields.Float(required=True)
    best_expected_final_score = fields.Float(required=True)
    best_sd = fields.Float(required=True)
    regret = fields.Float(required=True)
    class_ = fields.String(required=True, data_key="class",
                           validate=validate.OneOf(("best", "tie", "inaccuracy", "mistake",
                                                    "blunder")))


class TurnAnalysisSchema(ma.Schema):
    """One turn: its decisions and its luck."""

    turn = fields.Integer(required=True)
    expected_final_score_at_start = fields.Float(required=True)
    expected_final_score_at_end = fields.Float(required=True)
    luck = fields.Float(required=True)
    points = fields.Integer(required=True)
    decisions = fields.List(fields.Nested(DecisionSchema), required=True)


class ClassCountsSchema(ma.Schema):
    """How many decisions fell in each class."""

    best = fields.Integer(required=True)
    tie = fields.Integer(required=True)
    inaccuracy = fields.Integer(required=True)
    mistake = fields.Integer(required=True)
    blunder = fields.Integer(required=True)


class PlayerAnalysisSchema(ma.Schema):
    """One player's decisions and summary."""

    name = fields.String(allow_none=True, required=True)
    final_total = fields.Integer(required=True)
    finished = fields.Boolean(required=True)
    start_expected_final_score = fields.Float(required=True)
    decisions = fields.Integer(required=True)
    total_regret = fields.Float(required=True)
    mean_regret = fields.Float(required=True, metadata={
        "description": "Mean regret per decision (Verhoeff's proficiency test: aim below 0.2)"})
    classes = fields.Nested(ClassCountsSchema, required=True)
    skill = fields.Float(required=True, metadata={"description": "Minus the total regret"})
    luck = fields.Float(required=True)
    difference = fields.Float(required=True, metadata={
        "description": "Final total (or expectation where unfinished) minus the expectation "
                       "at the start: skill + luck"})
    turns = fields.List(fields.Nested(TurnAnalysisSchema), required=True)


class ThresholdsSchema(ma.Schema):
    """Regret thresholds of the classes."""

    tie = fields.Float(required=True)
    inaccuracy = fields.Float(required=True)
    mistake = fields.Float(required=True)


class GameAnalysisSchema(ma.Schema):
    """Every decision of every player judged against optimal play."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    exact = fields.Boolean(required=True)
    method = fields.String(required=True)
    thresholds = fields.Nested(ThresholdsSchema, required=True)
    players = fields.List(fields.Nested(PlayerAnalysisSchema), required=True)


# --------------------------------------------------------------------------- win probability


class WinPlayerSchema(StrictSchema):
    """One player's sheet."""

    name = fields.String(validate=validate.Length(max=100))
    scorecard = fields.Nested(ScorecardSchema, metadata={"description": "Default: empty"})


class WinProbabilityRequestSchema(RulesRequestFields):
    """Every player's sheet, and the position of the player to move."""

    players = fields.List(fields.Nested(WinPlayerSchema), required=True,
                          validate=validate.Length(1, MAX_PLAYERS))
    to_move = _int(0, MAX_PLAYERS - 1, metadata={
        "description": "Index of the player to move (default 0); `dice` are theirs"})
    dice = dice_field(metadata={"description": "The dice of the player to move (mid-turn); "
                                               "needs `throw`"})
    throw = _int(1, MAX_THROW, metadata={"description": "Throw the dice stand on (1 = first)"})
    em_baixo = _bool(metadata={"description": "Bozó: the dice count by their bottom faces"})


class PlayerChancesSchema(ma.Schema):
    """One player's chances."""

    name = fields.String(allow_none=True, required=True)
    current_total = fields.Integer(required=True)
    expected_final_score = fields.Float(required=True)
    sd = fields.Float(required=True)
    distribution_exact = fields.Boolean(required=True)
    distribution_method = fields.String(required=True)
    win = fields.Float(required=True, metadata={
        "description": "P(the only player with the top total)"})
    tie = fields.Float(required=True, metadata={"description": "P(sharing the top total)"})
    first = fields.Float(required=True, metadata={
        "description": "P(finishing first, ties counted) = win + tie"})
    share = fields.Float(required=True, metadata={
        "description": "Expected share of the win (a k-way tie counts 1/k); sums to 1"})


class MoveChanceSchema(ma.Schema):
    """A move with its expected final score and its expected share of the win."""

    action = fields.String(required=True, validate=validate.OneOf(("keep", "score")))
    expected_final_score = fields.Float(required=True)
    win_share = fields.Float(required=True, metadata={
        "description": "Expected share of the win after this move, playing on to maximise "
                       "it (ties shared)"})
    dice = fields.List(fields.Integer())
    em_baixo = fields.Boolean()
    box = fields.String(validate=validate.OneOf(ALL_BOX_IDS))
    score = fields.Integer()


class WinMoveSchema(ma.Schema):
    """The move that maximises the chance of winning, beside the expected-score move."""

    computed = fields.Boolean(required=True)
    reason = fields.String(metadata={"description": "Why it was not computed"})
    max_expected_score = fields.Nested(MoveChanceSchema)
    max_win = fields.Nested(MoveChanceSchema)
    differs = fields.Boolean(metadata={
        "description": "Winning is likelier with another move than the expected-score one"})


class WinProbabilitySchema(ma.Schema):
    """Every player's chance of finishing first."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    exact = fields.Boolean(required=True, metadata={
        "description": "Every player's distribution is exact (else some are sampled)"})
    assumptions = fields.String(required=True)
    to_move = fields.Integer(required=True)
    players = fields.List(fields.Nested(PlayerChancesSchema), required=True)
    move = fields.Nested(WinMoveSchema, allow_none=True, required=True, metadata={
        "description": "With the dice of the player to move: the move maximising their "
                       "chance of winning against the others' distributions, when it "
                       "differs from the expected-score move (up to 4 open boxes, exact "
                       "variants); null without dice"})


__all__ = [
    "BoxChanceSchema", "DistributionSchema", "MoveSuggestRequestSchema",
    "PositionValueRequestSchema", "PositionValueSchema", "StrictSchema",
    "TurnOutlookSchema",
]

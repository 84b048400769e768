"""Schemas of the analysis resources (positions/value, the answer of games/analyze,
games/win-probability, and the coaching fields of moves/suggest): the public contract of
issue 10's endpoints. games/analyze takes the recorded game of games/validate
(`games.GameSchema`).

Kept apart from `schemas.py` (the scoring endpoints' contract) so that the two can change
without touching each other; they share its field types and scorecard schema.
"""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from .common import (
    MAX_THROW,
    MAX_VALUE,
    MAX_WIN_PLAYERS,
    AnswerFields,
    AnswerSchema,
    BoxColumnFields,
    MoveUnionField,
    NamedPlayerFields,
    Rounded,
    RulesRequestFields,
    ScorecardSchema,
    StrictSchema,
    _bool,
    _int,
    box_id,
    dice_field,
    move_union,
    on_move,
    throw_stood_on,
    values_method,
)

MAX_THRESHOLDS = 50


# --------------------------------------------------------------------------- shared fields
# Fields that more than one answer below holds, declared once.


def _player_name() -> fields.String:
    """A player's name in an answer (`games.player_name`)."""
    return fields.String(required=True, metadata={
        "description": "The player's name: the request's, else \"Player <n>\", counted from "
                       "1, as in games/validate"})


def _current_total(attribute: str | None = None) -> fields.Integer:
    """The points a sheet holds now, read from `attribute`."""
    return fields.Integer(required=True, attribute=attribute, metadata={
        "description": 'Points on the sheet now'})


def _final_sd(attribute: str | None = None) -> Rounded:
    """The standard deviation of a final score (to 6 decimals), read from `attribute`."""
    return Rounded(6, required=True, attribute=attribute, metadata={
        "description": 'Standard deviation of the final score'})


def _turn_number() -> fields.Integer:
    """The number of an analysed turn."""
    return fields.Integer(required=True, metadata={"description": "The turn's number (1 = first)"})


# --------------------------------------------------------------------------- coaching


class BoxChanceSchema(BoxColumnFields):
    """The chance that the turn ends with points in one box."""

    probability = fields.Float(required=True, metadata={
        "description": 'Probability that the turn ends with points in this box'})


class TurnOutlookSchema(ma.Schema):
    """Where the turn ends after a keep, under the advisor's play of the rest of it."""

    expected_points = fields.Float(required=True, metadata={
        "description": "Expected points this turn adds to the sheet (box score and bonuses)"})
    boxes_with_points = fields.List(fields.Nested(BoxChanceSchema), required=True, metadata={
        "description": "Every box the turn may end in with a non-zero score, most likely "
                       "first (e.g. P(YAHTZEE this turn | keep 3-3-3)); the rest of the "
                       "probability is a scratch"})


# --------------------------------------------------------------------------- positions


def _position_em_baixo() -> fields.Boolean:
    """The `em_baixo` flag of a request about a position, perhaps mid-turn (positions/value,
    games/win-probability)."""
    return _bool(metadata={"description": "Bozó: the dice count by their bottom faces"})


class PositionValueRequestSchema(RulesRequestFields):
    """A position: a scorecard at the start of a turn, or with the dice after a throw."""

    scorecard = fields.Nested(ScorecardSchema)
    dice = dice_field(metadata={"description": "The dice now (mid-turn); needs `throw`"})
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn the dice stand on (1 = first); required with dice"})
    em_baixo = _position_em_baixo()
    at_least = fields.List(_int(0, MAX_VALUE), validate=validate.Length(max=MAX_THRESHOLDS),
                           metadata={"description": "Totals t for which P(final >= t) is "
                                                    "wanted"})
    histogram = _bool(metadata={"description": "Add the whole distribution"})


class ScoreChanceSchema(ma.Schema):
    """A total and a probability (`analyst.ScoreChance`)."""

    score = fields.Integer(required=True, metadata={"description": 'The threshold asked for'})
    probability = fields.Float(required=True, metadata={"description": 'P(final score >= score)'})


class PercentilesSchema(AnswerSchema):
    """Percentiles of the final total: the smallest t with P(final <= t) >= q %
    (`analyst.Percentiles`)."""

    p5 = fields.Integer(required=True, data_key="5", metadata={
        "description": "The 5th percentile"})
    p25 = fields.Integer(required=True, data_key="25", metadata={
        "description": "The 25th percentile"})
    p50 = fields.Integer(required=True, data_key="50", metadata={
        "description": "The 50th percentile"})
    p75 = fields.Integer(required=True, data_key="75", metadata={
        "description": "The 75th percentile"})
    p95 = fields.Integer(required=True, data_key="95", metadata={
        "description": "The 95th percentile"})


class DistributionSchema(AnswerSchema):
    """The distribution of the final total, and how it was obtained
    (`analyst.DistributionReport`; its `histogram` None when not asked for)."""

    left_out = frozenset({"histogram"})

    exact = fields.Boolean(required=True, metadata={
        "description": "Computed exactly (every exact variant, from any position); false: "
                       "sampled from games of the method's own play (column sheets, Maxi "
                       "Yatzy; see samples)"})
    method = fields.String(required=True, metadata={
        "description": 'How the distribution was computed'})
    samples = fields.Integer(allow_none=True, required=True, metadata={
        "description": 'Games simulated (null when exact)'})
    standard_error = Rounded(6, allow_none=True, required=True, metadata={
        "description": "Standard error of the sampled mean (null when exact)"})
    mean = Rounded(6, required=True, metadata={"description": 'Expected final score'})
    sd = _final_sd()
    min = fields.Integer(required=True, attribute="lo", metadata={
        "description": 'Lowest final score with positive probability'})
    max = fields.Integer(required=True, attribute="hi", metadata={
        "description": 'Highest final score with positive probability'})
    percentiles = fields.Nested(PercentilesSchema, required=True)
    at_least = fields.List(fields.Nested(ScoreChanceSchema), required=True, metadata={
        "description": "P(final >= score) for each total asked"})
    histogram = fields.List(fields.Nested(ScoreChanceSchema), metadata={
        "description": "Every total with a non-zero probability (on request)"})


class PositionValueSchema(AnswerFields):
    """What a position is worth under the advisor's play (`analyst.PositionReport`, its
    distribution a `DistributionReport`)."""

    exact = fields.Boolean(required=True, metadata={
        "description": "Mean and sd are exact (exact method); false for the approximate "
                       "methods, whose figures come from games of their own play"})
    method = fields.String(required=True, metadata={"description": "The advisor's method"})
    throw = fields.Integer(allow_none=True, required=True, metadata={
        "description": 'The throw the dice stand on (mid-turn)'})
    dice = fields.List(fields.Integer(), allow_none=True, required=True, metadata={
        "description": 'The dice of the position (mid-turn), sorted'})
    current_total = _current_total()
    expected_final_score = Rounded(6, required=True, attribute="mean", metadata={
        "description": 'Expected final score under optimal play'})
    sd = Rounded(6, required=True, metadata={
        "description": "Standard deviation of the final total (exact second moment)"})
    distribution = fields.Nested(DistributionSchema, required=True)


# --------------------------------------------------------------------------- games


class PlayedKeepSchema(AnswerSchema):
    """A keep as a decision shows it (the one played, or the best), without its values (the
    decision's): `domain.moves.Keep`."""

    left_out = frozenset({"em_baixo"})  # outside Bozó

    action = fields.String(required=True, validate=validate.OneOf(("keep",)), metadata={
        "description": "keep: these dice kept, the others thrown again"})
    dice = fields.List(fields.Integer(), required=True, metadata={
        "description": "The dice kept, as thrown (top faces)"})
    em_baixo = fields.Boolean(metadata={
        "description": "Bozó only: the next throw announced 'em baixo' (read by its bottom "
                       "faces). A recorded game says it of its last throw only: for a keep "
                       "before an earlier throw the analysis takes the announcement that "
                       "made that keep worth most"})


class PlayedScoreSchema(AnswerSchema):
    """A placement as a decision shows it (the one played, or the best), without its values
    (the decision's); the one played says what it earned: `domain.moves.ScoreBox`."""

    left_out = frozenset({"five_of_a_kind_bonus", "upper_bonus"})  # the best move's

    action = fields.String(required=True, validate=validate.OneOf(("score",)), metadata={
        "description": "score: a box written"})
    box = box_id(required=True, metadata={"description": "The box written"})
    column = fields.Integer(required=True, allow_none=True, metadata={
        "description": "Column number on a column sheet, else null"})
    score = fields.Integer(required=True, metadata={
        "description": "Points written in the box"})
    five_of_a_kind_bonus = fields.Integer(metadata={
        "description": "The move played: five-of-a-kind bonus points it earned"})
    upper_bonus = fields.Integer(metadata={
        "description": "The move played: upper bonus points it secured"})


#: A decision's move: a keep or a placement (`analysis.games.Decision`'s `move`, `best`).
PLAYED_MOVE = move_union("PlayedMove", keep=("PlayedKeep", PlayedKeepSchema),
                         score=("PlayedScore", PlayedScoreSchema))


class DecisionSchema(ma.Schema):
    """One decision: the position, the move played, the best move, their values."""

    turn = _turn_number()
    throw = throw_stood_on()
    dice = fields.List(fields.Integer(), required=True, metadata={
        "description": "The dice the decision was made on, as thrown"})
    scored_dice = fields.List(fields.Integer(), required=True, metadata={
        "description": "The same dice as read (Bozó: the bottom faces of a throw read em "
                       "baixo; see `move.em_baixo`), sorted"})
    move = MoveUnionField(PLAYED_MOVE, required=True, metadata={
        "description": "The move played"})
    best = MoveUnionField(PLAYED_MOVE, required=True, metadata={
        "description": "The best move"})
    expected_final_score = Rounded(6, required=True, metadata={
        "description": "Expected final total after the move, under optimal play after it"})
    sd = Rounded(6, required=True, metadata={
        "description": 'Standard deviation of the final score after the move'})
    best_expected_final_score = Rounded(6, required=True, metadata={
        "description": 'Expected final score of the best move'})
    best_sd = Rounded(6, required=True, metadata={
        "description": 'Standard deviation of the final score after the best move'})
    regret = Rounded(6, required=True, metadata={
        "description": "Best expected final score minus the move's; 0 for a placement "
                       "that wins the game at once, the best move whatever the scores say "
                       "(docs/rules.md, decision 26)"})
    class_ = fields.String(required=True, data_key="class",
                           validate=validate.OneOf(("best", "tie", "inaccuracy", "mistake",
                                                    "blunder")),
                           metadata={"description": "How costly the move was (thresholds)"})


class TurnAnalysisSchema(ma.Schema):
    """One turn: its decisions and its luck."""

    turn = _turn_number()
    expected_final_score_at_start = Rounded(6, required=True, metadata={
        "description": 'Expected final score before the turn'})
    expected_final_score_at_end = Rounded(6, required=True, metadata={
        "description": 'Expected final score after the turn'})
    luck = Rounded(6, required=True, metadata={"description": "The turn's luck"})
    points = fields.Integer(required=True, metadata={"description": 'Points the turn earned'})
    decisions = fields.List(fields.Nested(DecisionSchema), required=True, metadata={
        "description": "The turn's decisions judged"})


class ClassCountsSchema(ma.Schema):
    """How many decisions fell in each class."""

    best = fields.Integer(required=True, metadata={
        "description": 'Decisions that were the unique best'})
    tie = fields.Integer(required=True, metadata={
        "description": 'Decisions as good as another best'})
    inaccuracy = fields.Integer(required=True, metadata={
        "description": 'Decisions costing up to the inaccuracy threshold'})
    mistake = fields.Integer(required=True, metadata={
        "description": 'Decisions costing up to the mistake threshold'})
    blunder = fields.Integer(required=True, metadata={
        "description": 'Decisions costing more than the mistake threshold'})


class PlayerAnalysisSchema(ma.Schema):
    """One player's decisions and summary."""

    name = _player_name()
    final_total = fields.Integer(required=True, metadata={
        "description": "The player's total at the end of the analysed turns"})
    finished = fields.Boolean(required=True, metadata={
        "description": "The player's sheet is full, or the game is over (an instant win "
                       "ended it): the difference is then from the final total"})
    start_expected_final_score = Rounded(6, required=True, metadata={
        "description": 'Expected final score at the start'})
    decisions = fields.Integer(required=True, attribute="decision_count", metadata={
        "description": 'Decisions judged'})
    total_regret = Rounded(6, required=True, metadata={
        "description": 'Sum of the regrets of every decision'})
    mean_regret = Rounded(6, required=True, metadata={
        "description": "Mean regret per decision (Verhoeff's proficiency test: aim below 0.2)"})
    classes = fields.Nested(ClassCountsSchema, required=True)
    skill = Rounded(6, required=True, metadata={"description": "Minus the total regret"})
    luck = Rounded(6, required=True, metadata={
        "description": 'Final total minus the starting expectation, less the skill (regrets)'})
    difference = Rounded(6, required=True, metadata={
        "description": "Final total (or expectation where unfinished) minus the expectation "
                       "at the start: skill + luck"})
    turns = fields.List(fields.Nested(TurnAnalysisSchema), required=True, metadata={
        "description": 'Each turn analysed'})


class ThresholdsSchema(ma.Schema):
    """Regret thresholds of the classes."""

    tie = fields.Float(required=True, metadata={"description": 'Regrets up to this are ties'})
    inaccuracy = fields.Float(required=True, metadata={
        "description": 'Largest regret classed as an inaccuracy'})
    mistake = fields.Float(required=True, metadata={
        "description": 'Largest regret classed as a mistake'})


class GameAnalysisSchema(AnswerFields):
    """Every decision of every player judged against optimal play."""

    exact = fields.Boolean(required=True, metadata={
        "description": 'Exact optimum (false: a documented approximation)'})
    method = values_method()
    thresholds = fields.Nested(ThresholdsSchema, required=True)
    players = fields.List(fields.Nested(PlayerAnalysisSchema), required=True, metadata={
        "description": "Each player's analysis, in the request's order"})


# --------------------------------------------------------------------------- win probability


class WinPlayerSchema(NamedPlayerFields):
    """One player's sheet."""

    scorecard = fields.Nested(ScorecardSchema, metadata={"description": "Default: empty"})


class WinProbabilityRequestSchema(RulesRequestFields):
    """Every player's sheet, and the position of the player to move."""

    players = fields.List(fields.Nested(WinPlayerSchema), required=True,
                          validate=validate.Length(1, MAX_WIN_PLAYERS), metadata={
        "description": "Every player's sheet, in turn order"})
    to_move = _int(0, MAX_WIN_PLAYERS - 1, metadata={
        "description": "Index of the player to move (default 0); `dice` are theirs"})
    dice = dice_field(metadata={"description": "The dice of the player to move (mid-turn); "
                                               "needs `throw`"})
    throw = _int(1, MAX_THROW, metadata={"description": "Throw the dice stand on (1 = first)"})
    em_baixo = _position_em_baixo()


class PlayerChancesSchema(ma.Schema):
    """One player's chances (`win.PlayerChances`: their position's value and chances)."""

    name = _player_name()
    current_total = _current_total("value.current_total")
    expected_final_score = Rounded(6, required=True, attribute="value.mean", metadata={
        "description": 'Expected final score'})
    sd = _final_sd("value.sd")
    distribution_exact = fields.Boolean(
        required=True, attribute="value.distribution.exact",
        metadata={"description": 'The final-score distribution is exact'})
    distribution_method = fields.String(
        required=True, attribute="value.distribution.method",
        metadata={"description": 'How the distribution was computed'})
    win = Rounded(9, required=True, attribute="chances.win", metadata={
        "description": "P(the only player with the top total)"})
    tie = Rounded(9, required=True, attribute="chances.tie", metadata={
        "description": "P(sharing the top total)"})
    first = Rounded(9, required=True, attribute="chances.first", metadata={
        "description": "P(finishing first, ties counted) = win + tie"})
    share = Rounded(9, required=True, attribute="chances.share", metadata={
        "description": "Expected share of the win (a k-way tie counts 1/k); sums to 1"})


def _chance_fields() -> dict[str, fields.Field]:
    """What a move says of its chances (`win.MoveChance`, beside the move of either
    kind)."""
    return {
        "expected_final_score": Rounded(6, required=True, metadata={
            "description": "Expected final score of the move"}),
        "win_share": Rounded(9, required=True, metadata={
            "description": "Expected share of the win after this move, playing on to "
                           "maximise it (ties shared)"}),
    }


# A move with its chances is a `win.MoveChance`: the move (`domain.moves.Keep` or
# `ScoreBox`, its fields read from `move`) with its figures beside it.
KeepChanceSchema = ma.Schema.from_dict({
    **on_move({"action": fields.String(required=True, validate=validate.OneOf(("keep",)),
                                       metadata={"description": "keep: keep these dice and "
                                                                "throw the others"})}),
    **_chance_fields(),
    **on_move({
        "dice": fields.List(fields.Integer(), required=True, metadata={
            "description": "The dice to keep as thrown (top faces)"}),
        # False outside Bozó, where the move's `em_baixo` is None
        "em_baixo": fields.Boolean(required=True, attribute="announced", metadata={
            "description": "Bozó: announce em baixo before the next throw (always false "
                           "elsewhere)"}),
    }),
}, name="KeepChanceSchema")

PlacementChanceSchema = ma.Schema.from_dict({
    **on_move({"action": fields.String(required=True, validate=validate.OneOf(("score",)),
                                       metadata={"description": "score: fill a box now"})}),
    **_chance_fields(),
    **on_move({
        "box": box_id(required=True, metadata={"description": "The box to fill"}),
        "score": fields.Integer(required=True, metadata={
            "description": "Points the box receives"}),
    }),
}, name="PlacementChanceSchema")

#: A move with its chances (`win.MoveChance`, the move held in its `move`).
MOVE_CHANCE = move_union("MoveChance", keep=("KeepChance", KeepChanceSchema),
                         score=("PlacementChance", PlacementChanceSchema), held_in="move")


class WinMoveSchema(ma.Schema):
    """The move that maximises the chance of winning, beside the expected-score move
    (`win.WinMove`)."""

    exact = fields.Boolean(required=True, metadata={
        "description": "The win shares are exact (late in a game: see method)"})
    method = fields.String(required=True, metadata={
        "description": "How the win shares are computed (exact, or the approximation)"})
    max_expected_score = MoveUnionField(MOVE_CHANCE, required=True, metadata={
        "description": "The move of the best expected score, with its share of the win"})
    max_win = MoveUnionField(MOVE_CHANCE, required=True, metadata={
        "description": "The move of the best share of the win"})
    differs = fields.Boolean(required=True, metadata={
        "description": "Winning is likelier with another move than the expected-score one"})


class WinProbabilitySchema(AnswerFields):
    """Every player's chance of finishing first (`win.WinProbability`)."""

    exact = fields.Boolean(required=True, metadata={
        "description": "Every player's distribution is exact (else some are sampled)"})
    assumptions = fields.String(required=True, metadata={"description": 'What the chances assume'})
    to_move = fields.Integer(required=True, metadata={"description": 'Index of the player to move'})
    players = fields.List(fields.Nested(PlayerChancesSchema), required=True, metadata={
        "description": "Each player's chances"})
    move = fields.Nested(WinMoveSchema, allow_none=True, required=True, metadata={
        "description": "With the dice of the player to move: the move maximising their "
                       "chance of winning against the others' distributions, when it "
                       "differs from the expected-score move (up to 4 open boxes, exact "
                       "variants); null without dice"})


__all__ = [
    "BoxChanceSchema", "DistributionSchema",
    "PositionValueRequestSchema", "PositionValueSchema", "StrictSchema",
    "TurnOutlookSchema",
]

"""Answers are typed, stated once: each answer schema dumps an object of the domain or the
advisor (a dataclass, never a dict built for the answer), and reads only names that object
has (one vocabulary), its fields left out when None only where the schema says so."""

from __future__ import annotations

import dataclasses

import marshmallow as ma
import pytest

from service.advisor.advice.bots import BotMove
from service.advisor.advice.moves import BoxChance, RankedMove, Suggestion, TurnOutlook
from service.advisor.analysis.analyst import (
    DistributionReport,
    Percentiles,
    PositionReport,
    ScoreChance,
)
from service.advisor.analysis.games import (
    ClassCounts,
    Decision,
    GameAnalysis,
    PlayerAnalysis,
    Thresholds,
    TurnAnalysis,
)
from service.advisor.objectives.target import TargetFigures
from service.advisor.objectives.win import (
    MoveChance,
    PlayerChances,
    WinFigures,
    WinMove,
    WinProbability,
)
from service.domain.consistency import ScorecardTotals
from service.domain.errors import Problem
from service.domain.games import GameValidation, PlayerResult, Standing, TurnRecord
from service.domain.moves import Keep, ScoreBox
from service.domain.rules import (
    BoxDefinition,
    EffectiveRules,
    RuleSet,
    VariantDefinition,
    VariantList,
)
from service.domain.scorecards import ColumnCard, Scorecard
from service.domain.scoring import (
    BoxCheck,
    ColumnTotals,
    HandScore,
    HandValidation,
    Placement,
    Totals,
)
from service.domain.turn import Earned, TurnOutcome, TurnResult
from service.domain.variants import FiveOfAKindBonus, OptionSpec, UpperBonus
from service.web.busy import Building, TableBuildingSchema
from service.web.schemas import analysis, games, hands, moves, scorecards, variants
from service.web.schemas.common import ColumnSchema, EchoRulesSchema, ScorecardSchema

#: Each answer schema and the type of the objects it dumps.
ANSWERS: list[tuple[type[ma.Schema], type]] = [
    (hands.HandScoreSchema, HandScore),
    (hands.PlacementSchema, Placement),
    (hands.HandValidationSchema, HandValidation),
    (hands.ValidateProblemSchema, Problem),
    (scorecards.ScorecardTotalsSchema, ScorecardTotals),
    (scorecards.ColumnTotalsSchema, ColumnTotals),
    (scorecards.BoxCheckSchema, BoxCheck),
    (scorecards.SheetProblemSchema, Problem),
    (ScorecardSchema, Scorecard),
    (ColumnSchema, ColumnCard),
    (EchoRulesSchema, RuleSet),
    (games.TurnResultSchema, TurnResult),
    (games.EarnedSchema, Earned),
    (games.GameTotalsSchema, Totals),
    (games.GameValidationSchema, GameValidation),
    (games.GameProblemSchema, Problem),
    (games.PlayerResultSchema, PlayerResult),
    (games.TurnRecordSchema, TurnRecord),
    (games.StandingSchema, Standing),
    (variants.VariantListSchema, VariantList),
    (variants.VariantDefinitionSchema, VariantDefinition),
    (variants.BoxDefinitionSchema, BoxDefinition),
    (variants.OptionDefinitionSchema, OptionSpec),
    (variants.UpperBonusDefinitionSchema, UpperBonus),
    (variants.FiveOfAKindBonusDefinitionSchema, FiveOfAKindBonus),
    (variants.EffectiveRulesSchema, EffectiveRules),
    (moves.MoveSuggestionSchema, Suggestion),
    (moves.BotMoveSchema, BotMove),
    (moves.KeepMoveSchema, RankedMove),
    (moves.ScoreMoveSchema, RankedMove),
    (analysis.TurnOutlookSchema, TurnOutlook),
    (analysis.BoxChanceSchema, BoxChance),
    (analysis.PositionValueSchema, PositionReport),
    (analysis.DistributionSchema, DistributionReport),
    (analysis.PercentilesSchema, Percentiles),
    (analysis.ScoreChanceSchema, ScoreChance),
    (analysis.GameAnalysisSchema, GameAnalysis),
    (analysis.ThresholdsSchema, Thresholds),
    (analysis.PlayerAnalysisSchema, PlayerAnalysis),
    (analysis.ClassCountsSchema, ClassCounts),
    (analysis.TurnAnalysisSchema, TurnAnalysis),
    (analysis.DecisionSchema, Decision),
    (analysis.PlayedKeepSchema, Keep),
    (analysis.PlayedScoreSchema, ScoreBox),
    (analysis.WinProbabilitySchema, WinProbability),
    (analysis.PlayerChancesSchema, PlayerChances),
    (analysis.WinMoveSchema, WinMove),
    (analysis.KeepChanceSchema, MoveChance),
    (analysis.PlacementChanceSchema, MoveChance),
    (TableBuildingSchema, Building),
]

#: What an objective adds to a suggestion (`Suggestion.extra`), read by path
EXTRAS = {"win": WinFigures, "target": TargetFigures}

#: The schemas of a move held in a record (`move`, beside its figures): the move's kind
#: each reads by path (`move.<name>`)
HELD_MOVES: dict[type[ma.Schema], type] = {
    moves.KeepMoveSchema: Keep,
    moves.ScoreMoveSchema: ScoreBox,
    analysis.KeepChanceSchema: Keep,
    analysis.PlacementChanceSchema: ScoreBox,
}

#: The schemas of a turn that read what the turn played from the `TurnOutcome` their object
#: holds (`outcome`: the outcome itself as `earned`, its figures by path, `outcome.<name>`)
HELD_OUTCOMES: dict[type[ma.Schema], set[str]] = {
    games.TurnResultSchema: {"earned", "dice", "scored_dice", "throw", "turn", "turns_left",
                             "game_over", "won"},
    games.TurnRecordSchema: {"earned"},
}


def names_of(cls: type) -> set[str]:
    """Every name an object of `cls` answers: its dataclass fields (or a named tuple's),
    properties and other attributes."""
    found = set(dir(cls))
    if dataclasses.is_dataclass(cls):
        found |= {f.name for f in dataclasses.fields(cls)}
    found |= set(getattr(cls, "_fields", ()))
    return found


@pytest.mark.parametrize("schema,cls", ANSWERS, ids=[s.__name__ for s, _ in ANSWERS])
def test_an_answer_schema_reads_only_what_its_type_has(schema, cls):
    """Every field is read from a name the type has (the first step of a path)."""
    names = names_of(cls)
    missing = [name for name, field in schema().dump_fields.items()
               if (field.attribute or name).split(".")[0] not in names]
    assert not missing, f"{schema.__name__} reads {missing}, which {cls.__name__} lacks"
    left_out = getattr(schema, "left_out", frozenset())
    assert left_out <= {field.attribute or name for name, field in
                        schema().dump_fields.items()}, left_out


@pytest.mark.parametrize("schema,kind", HELD_MOVES.items(),
                         ids=[s.__name__ for s in HELD_MOVES])
def test_a_move_beside_its_figures_is_read_from_the_move(schema, kind):
    """A suggested move and a move with its chances are the domain's move (a `Keep` or a
    `ScoreBox`) held in a record beside its figures: each of the move's fields is read from
    the move, by a name the move's kind has, and every other from the record."""
    names = names_of(kind)
    read = {name: field.attribute or name for name, field in schema().dump_fields.items()}
    on_move = {name: attr.split(".", 1)[1] for name, attr in read.items()
               if attr.startswith("move.")}
    assert "action" in on_move, schema.__name__
    assert all(attr in names for attr in on_move.values()), (schema.__name__, on_move)
    assert not (set(read) - set(on_move)) & names, "a move's field read from the record"


@pytest.mark.parametrize("schema,on_outcome", HELD_OUTCOMES.items(),
                         ids=[s.__name__ for s in HELD_OUTCOMES])
def test_a_turn_played_is_read_from_its_outcome(schema, on_outcome):
    """A turn played is one record, the domain's `TurnOutcome`: an answer about a turn holds
    it and reads from it what the turn played and earned (`earned` is the outcome itself,
    dumped by `EarnedSchema`), by names the outcome has, never from a copy of its fields."""
    names = names_of(TurnOutcome)
    read = {name: (field.attribute or name).split(".") for name, field in
            schema().dump_fields.items()}
    held = {name: path[1:] for name, path in read.items() if path[0] == "outcome"}
    assert set(held) == on_outcome, schema.__name__
    assert held["earned"] == [], "earned is the outcome, not a copy of it"
    assert all(path[0] in names for path in held.values() if path), held


@pytest.mark.parametrize("objective", sorted(EXTRAS))
def test_an_objective_answers_the_fields_it_declares(objective):
    """The fields an objective adds to the answer (`Objective.answer`, the spec's) are its
    dataclass's."""
    from service.advisor.objectives import REGISTRY

    declared = [f.name for f in REGISTRY[objective].answer]
    assert declared == [f.name for f in dataclasses.fields(EXTRAS[objective])]


def test_every_answer_names_its_variant_from_its_rules():
    """An answer about a table of rules states the rules once: `variant` is theirs."""
    for schema, cls in ANSWERS:
        fields_ = schema().dump_fields
        if "rules" in fields_ and "variant" in fields_:
            assert "variant" in names_of(cls) and "rules" in {
                f.name for f in dataclasses.fields(cls)}, cls.__name__

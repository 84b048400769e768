"""Random legal games, as a score-keeping app would record them (for the property tests and
bench/bench_games.py).

A game is played with `play_turn` on random dice: after each throw the player keeps a random
part of the dice (never all of them, decision 18) or stops, then writes the hand in a random
legal box, or (with `scratches`) a chosen 0 in one (decision 3). The answer is a
games/validate request body and, beside it, facts the tests use to mutate it (each turn's
throw limit, who won at once).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from service.domain.consistency import bonus_points, placements_of
from service.domain.games import validate_game
from service.domain.rules import RuleSet, effective_rules
from service.domain.scorecards import scorecard_of, sheet_totals
from service.domain.scoring import Sheet, empty_sheet, max_throw, score_hand
from service.domain.turn import TurnOutcome, play_turn
from service.web.schemas.common import ScorecardSchema
from service.web.schemas.games import EarnedSchema, GameValidationSchema


@dataclass
class Generated:
    """A generated game: the request body and what the generator knows about it."""

    body: dict[str, Any]
    rs: RuleSet
    limits: dict[tuple[int, int], int] = field(default_factory=dict)  # (player, turn) -> most
    winner: tuple[int, int] | None = None  # (player, turn) of an instant win
    sheets: list[Sheet] = field(default_factory=list)


def _legal(rs: RuleSet, dice: list[int], throw: int, sheet: Sheet, em_baixo: bool) -> list:
    return [p for p in placements_of(score_hand(rs, dice, throw, sheet, em_baixo)) if p.legal]


def _play_one(rs: RuleSet, rng: random.Random, sheet: Sheet, force_win: bool,
              no_win: bool, scratches: float = 0.0) -> tuple[dict[str, Any], Any, int]:
    """One turn: throws, kept dice, the box; returns (turn, outcome, throw limit).

    `scratches`: how often the box takes a chosen 0 (three times as often, up to always, for
    a five of a kind that earns a bonus). With 0 the random draws are those of a game without
    scratches, so the games of a seed stay the same."""
    v = rs.variant
    limit = max_throw(rs, sheet)
    em_baixo = v.em_baixo and rng.random() < 0.2
    dice = [rng.randint(1, 6) for _ in range(v.dice)]
    if force_win:
        dice = [rng.randint(1, 6)] * v.dice
    throws, kept = [dice], []
    while True:
        t = len(throws)
        first_win = t == 1 and score_hand(rs, dice, t, sheet, em_baixo).wins_game
        if first_win and not no_win:
            break  # an instant win: stop on it
        if t >= limit or not _legal(rs, dice, t + 1, sheet, em_baixo):
            break  # no throw left, or none whose result could be written anywhere
        if not first_win and (force_win or rng.random() < 0.15):
            break
        if rng.random() < 0.75:  # keep the most common face: five of a kinds, bonuses
            face = max(range(1, 7), key=lambda f: (dice.count(f), f))
            keep = [face] * min(dice.count(face), v.dice - 1)
        else:
            keep = rng.sample(dice, rng.randint(0, v.dice - 1))
        lucky = keep and len(set(keep)) == 1 and rng.random() < 0.2
        nxt = keep + [keep[0] if lucky else rng.randint(1, 6) for _ in range(v.dice - len(keep))]
        rng.shuffle(nxt)
        kept.append(sorted(keep))
        throws.append(nxt)
        dice = nxt
    throw = len(throws)
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    choices = _legal(rs, dice, throw, sheet, em_baixo)
    win = throw == 1 and hs.wins_game
    scratch = False
    if scratches and choices:
        chance = scratches * (3 if any(bonus_points(c) for c in choices) else 1)
        scratch = rng.random() < chance
    # often the box worth most now, else any legal box (a chosen 0: any box it may go in)
    if not scratch and rng.random() < 0.6:
        best = max(bonus_points(c) + c.score + c.upper_bonus for c in choices)
        choices = [c for c in choices if bonus_points(c) + c.score + c.upper_bonus == best]
    p = None if (win and not scratch and (not choices or rng.random() < 0.5)) \
        else rng.choice(choices)
    turn: dict[str, Any] = {"throws": throws, "kept": kept}
    if p is not None:
        turn["box"] = p.box
        if p.column is not None:
            turn["column"] = p.column
    if em_baixo:
        turn["em_baixo"] = True
    if scratch:
        turn["scratch"] = True
    outcome = play_turn(rs, sheet, dice, throw, turn.get("box"), turn.get("column"), em_baixo,
                        scratch=scratch)
    turn["points"] = outcome.score
    return turn, outcome, limit


def random_game(variant: str, seed: int, players: int = 2, options: dict | None = None,
                rules: dict | None = None, force_win_at: tuple[int, int] | None = None,
                no_wins: bool = False, scratches: float = 0.0) -> Generated:
    """A random legal game of the variant (`force_win_at`: (player, turn) throws a five of a
    kind on its first throw; `no_wins`: instant wins are passed by, throwing again;
    `scratches`: how often a turn writes a chosen 0, see `_play_one`)."""
    rng = random.Random(seed)
    rs = effective_rules(variant, options, rules)
    sheets = [empty_sheet(rs) for _ in range(players)]
    turns: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    gen = Generated(body={}, rs=rs)
    over = False
    for r in range(rs.variant.turns):
        for i in range(players):
            turn, outcome, limit = _play_one(rs, rng, sheets[i], force_win_at == (i, r),
                                             no_wins, scratches)
            gen.limits[(i, r)] = limit
            turns[i].append(turn)
            sheets[i] = outcome.sheet
            if outcome.sheet.won:
                gen.winner = (i, r)
                over = True
                break
        if over:
            break
    totals = [sheet_totals(rs, s).total for s in sheets]
    body: dict[str, Any] = {
        "players": [{"name": f"P{i}", "turns": turns[i], "total": totals[i]}
                    for i in range(players)]}
    if gen.winner is not None:
        body["winners"] = [gen.winner[0]]
    else:
        top = max(totals)
        body["winners"] = [i for i, t in enumerate(totals) if t == top]
    if options:
        body["options"] = options
    if rules:
        body["rules"] = rules
    gen.body = body
    gen.sheets = sheets
    return gen


def scorecard_json(rs: RuleSet, sheet: Sheet) -> dict[str, Any]:
    """A sheet as the API writes it in an answer (`scorecard_of`, dumped by the answer's
    schema): what a request sends back."""
    return ScorecardSchema().dump(scorecard_of(rs, sheet))


def earned_json(outcome: TurnOutcome) -> dict[str, Any]:
    """What a turn earned as the API writes it (games/turn's and games/validate's `earned`:
    the outcome dumped by `EarnedSchema`)."""
    return EarnedSchema().dump(outcome)


def validation_json(rs: RuleSet, game: dict[str, Any]) -> dict[str, Any]:
    """games/validate's answer to `game`, as the API writes it (`validate_game`, dumped by
    the answer's schema)."""
    return GameValidationSchema().dump(validate_game(rs, game))


def final_scorecards(gen: Generated) -> list[dict[str, Any]]:
    """Each player's final sheet as a scorecard object."""
    return [scorecard_json(gen.rs, s) for s in gen.sheets]

"""Every operation's answers, byte for byte: a fixed corpus of requests to every operation of
the API, over several variants (a column sheet among them), errors and batches included, each
answer's status and body hashed and held to the hashes recorded in
`tests/data/answers.sha256.json`.

A refactoring that keeps the contract keeps these bytes. When an answer is meant to change
(a change the CHANGELOG states), record the hashes again and commit the file with it:

    UPDATE_ANSWER_HASHES=1 .venv/bin/python -m pytest -q -p no:randomly \
        tests/web/test_answers_hashed.py

Each case's request is hashed too (`request`), so that a change of the corpus (it takes the
docs' example bodies, `service.web.examples`, for the common ones) is told apart from a
change of the answers. The app is the suite's (`tests/conftest.py`: its own table directory,
tables built inside the request), so no answer is a 202. Left out, because their bodies vary
from run to run: the sampled figures of the approximate methods (column sheets, Maxi Yatzy)
in positions/value, games/win-probability and games/analyze (a time budget bounds how many
games are sampled), and moves/bot without a seed (the service draws one).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from service.domain.variants import VARIANT_IDS
from service.web.examples import examples
from tests.web.test_analysis_api import GAME as GENERALA_GAME  # a generala game with keeps

#: One worker runs them all (the advisor's tables are built once, in that worker's app).
pytestmark = pytest.mark.xdist_group("answers")

HASHES = Path(__file__).resolve().parents[1] / "data" / "answers.sha256.json"
UPDATE = os.environ.get("UPDATE_ANSWER_HASHES") == "1"
SPEC = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"

#: The variants whose every operation is asked (the advisor's exact methods' tables)
ADVISED = ("yahtzee", "yatzy", "kniffel", "generala", "bozo", "yacht")
#: The operations of a variant that take a body, by their path after the variant
SCORING = ("hands/validate", "hands/score", "hands/score/batch", "scorecards/score",
           "scorecards/score/batch", "games/turn", "games/turn/batch", "games/validate",
           "games/validate/batch")
ADVICE = ("moves/suggest", "moves/bot", "positions/value", "games/analyze",
          "games/win-probability")
COLUMNS = {"options": {"columns": True}}


class Case(NamedTuple):
    """A request of the corpus."""

    name: str
    method: str
    path: str
    body: Any = None
    content_type: str | None = None


def _post(name: str, path: str, body: Any, content_type: str | None = None) -> Case:
    return Case(name, "POST", f"/v1/variants/{path}", body, content_type)


def _turn(throws: list[list[int]], box: str | None, kept: list[list[int]] | None = None,
          **more: Any) -> dict[str, Any]:
    return {"throws": throws, "box": box, **({"kept": kept} if kept is not None else {}),
            **more}


#: A yacht game that breaks rules in several ways (games/validate lists every problem)
BROKEN_GAME = {"players": [
    {"name": "ana", "total": 99, "turns": [
        _turn([[6, 6, 6, 2, 7]], "sixes"),
        _turn([[1, 2, 3, 4, 5, 6]], "ones", points=4),
        _turn([[1, 1, 1, 1, 1]], "villa"),
        _turn([[2, 2, 2, 2, 2]], "sixes")]},
    {"turns": [_turn([[3, 3, 3, 3, 3]], "yacht", points=50)]},
], "winners": [1]}

#: A bozo game, the last throw of a turn read em baixo
BOZO_GAME = {"players": [
    {"name": "ana", "turns": [
        _turn([[1, 1, 2, 3, 6], [1, 1, 1, 2, 6]], "sixes", kept=[[1, 1]], em_baixo=True),
        _turn([[2, 3, 4, 5, 6]], "full_house", scratch=True)]},
    {"name": "bia", "turns": [_turn([[4, 4, 4, 1, 1]], "full_house")]},
]}

#: A yahtzee sheet late in a game (three boxes open)
LATE = {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18,
                  "three_of_a_kind": 22, "four_of_a_kind": 0, "full_house": 25,
                  "small_straight": 30}}
#: A yahtzee sheet with its YAHTZEE made and a bonus won
BONUS = {"boxes": {"five_of_a_kind": 50, "fours": 20}, "five_of_a_kind_bonuses": 1}
#: A yams column sheet: the down column half filled, the free column's chance, the up
#: column's last box, the first-throw column's YAM's
YAMS_COLUMNS = {"columns": [
    {"boxes": {"ones": 2, "twos": 6, "threes": 9}},
    {"boxes": {"chance": 21}},
    {"boxes": {"chance": 17}},
    {"boxes": {"five_of_a_kind": 50}},
]}


def _variant_cases() -> list[Case]:
    """The variants' definitions, the effective rules, and every operation of every variant
    with its docs example (the advisor's for `ADVISED`)."""
    cases = [Case("variants", "GET", "/v1/variants"),
             Case("variant unknown (404)", "GET", "/v1/variants/poker")]
    for vid in VARIANT_IDS:
        cases.append(Case(f"variant {vid}", "GET", f"/v1/variants/{vid}"))
        body = examples(vid)
        cases.append(_post(f"{vid} rules", f"{vid}/rules", body["rules"]))
        for operation in SCORING + (ADVICE if vid in ADVISED else ()):
            cases.append(_post(f"{vid} {operation}", f"{vid}/{operation}", body[operation]))
    return cases


def _special_cases() -> list[Case]:
    """Answers of every shape: house rules, column sheets, optional fields present and
    absent, the objectives, coaching, the bots' levels, histograms, errors."""
    return [
        # effective rules
        _post("general rules with house rules", "general/rules", {
            "options": {"trinca_quadra": "fixed"},
            "rules": {"boxes": {"full_house": {"value": 30}}, "remove_boxes": ["chance"],
                      "upper_bonus": {"threshold": 60, "amount": 30}}}),
        _post("yams rules with columns", "yams/rules", COLUMNS),
        _post("yahtzee rules without bonuses", "yahtzee/rules", {
            "rules": {"upper_bonus": None, "five_of_a_kind_bonus": None}}),
        _post("general rules unknown box (refused)", "general/rules",
              {"rules": {"boxes": {"villa": {"value": 3}}}}),
        _post("general rules unknown field (422)", "general/rules", {"rules": {"colour": 1}}),
        # hands/validate
        _post("yahtzee hands/validate not a hand", "yahtzee/hands/validate",
              {"dice": [1, "x", 7, 2.5]}),
        _post("maxi_yatzy hands/validate five dice", "maxi_yatzy/hands/validate",
              {"dice": [1, 2, 3, 4, 5], "throw": 9}),
        _post("yatzy hands/validate a hand", "yatzy/hands/validate",
              {"dice": [2, 2, 3, 3, 3], "throw": 2}),
        _post("yams hands/validate columns", "yams/hands/validate",
              {"dice": [5, 5, 5, 5, 5], "throw": 1, **COLUMNS}),
        # hands/score
        _post("yahtzee hands/score joker and bonus", "yahtzee/hands/score",
              {"dice": [4, 4, 4, 4, 4], "throw": 2, "scorecard": BONUS}),
        _post("yahtzee hands/score joker free", "yahtzee/hands/score",
              {"dice": [2, 2, 2, 2, 2], "throw": 3, "scorecard": BONUS,
               "options": {"joker": "free"}}),
        _post("generala hands/score servida", "generala/hands/score",
              {"dice": [5, 5, 5, 5, 5], "throw": 1}),
        _post("bozo hands/score em baixo", "bozo/hands/score",
              {"dice": [1, 1, 2, 3, 6], "throw": 1, "em_baixo": True}),
        _post("yams hands/score columns", "yams/hands/score",
              {"dice": [3, 3, 3, 4, 4], "throw": 1, "scorecard": YAMS_COLUMNS, **COLUMNS}),
        _post("general hands/score columns", "general/hands/score",
              {"dice": [6, 6, 6, 6, 1], "throw": 1, "options": {"columns": True}}),
        _post("maxi_yatzy hands/score saved throws", "maxi_yatzy/hands/score",
              {"dice": [1, 2, 3, 4, 5, 6], "throw": 5,
               "scorecard": {"boxes": {"ones": 3, "twos": 6, "chance": 20},
                             "saved_throws": 2}}),
        _post("general hands/score house rules", "general/hands/score",
              {"dice": [2, 2, 3, 3, 3], "throw": 1,
               "rules": {"boxes": {"full_house": {"value": 30, "first_throw_bonus": 5}}}}),
        _post("yahtzee hands/score float dice", "yahtzee/hands/score",
              {"dice": [1.0, 2, 3, 4, 5.0]}),
        _post("yahtzee hands/score bad face (422)", "yahtzee/hands/score",
              {"dice": [0, 1, 2, 3, 4]}),
        _post("maxi_yatzy hands/score five dice (refused)", "maxi_yatzy/hands/score",
              {"dice": [1, 2, 3, 4, 5]}),
        _post("yahtzee hands/score impossible sheet (409)", "yahtzee/hands/score",
              {"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"ones": 7}}}),
        _post("yahtzee hands/score not json (422)", "yahtzee/hands/score", "{",
              "application/json"),
        _post("yahtzee hands/score as text (415)", "yahtzee/hands/score", "dice",
              "text/plain"),
        _post("yahtzee hands/score/batch house rules", "yahtzee/hands/score/batch", [
            {"dice": [6, 6, 6, 6, 6], "throw": 1},
            {"dice": [1, 2, 3, 4, 5], "rules": {"boxes": {"large_straight": {"value": 45}}}},
            {"dice": [1, 1, 1, 1, 1], "scorecard": BONUS}]),
        _post("yahtzee hands/score/batch item refused", "yahtzee/hands/score/batch", [
            {"dice": [6, 6, 6, 6, 6]}, {"dice": [1, 2, 3, 4, 5, 6]}]),
        # scorecards/score
        _post("yahtzee scorecards/score inconsistent", "yahtzee/scorecards/score",
              {"boxes": {"ones": 7, "full_house": 20, "chance": 31},
               "five_of_a_kind_bonuses": 2}),
        _post("yahtzee scorecards/score final", "yahtzee/scorecards/score",
              {**LATE, "final": True}),
        _post("yams scorecards/score columns", "yams/scorecards/score",
              {**YAMS_COLUMNS, **COLUMNS}),
        _post("yams scorecards/score columns inconsistent", "yams/scorecards/score",
              {"columns": [{"boxes": {"twos": 4}}, {}, {"boxes": {"ones": 2}},
                           {"boxes": {"chance": 29}}], **COLUMNS, "final": True}),
        _post("generala scorecards/score won", "generala/scorecards/score",
              {"boxes": {"five_of_a_kind": 50}, "won": True}),
        _post("maxi_yatzy scorecards/score too many saved", "maxi_yatzy/scorecards/score",
              {"boxes": {"ones": 3}, "saved_throws": 9}),
        _post("yahtzee scorecards/score/batch audits", "yahtzee/scorecards/score/batch", [
            LATE, {"boxes": {"chance": 4}}, {"boxes": {"ones": 5}, "final": True}]),
        _post("yahtzee scorecards/score columns refused", "yahtzee/scorecards/score",
              {"columns": [{}, {}, {}, {}]}),
        # games/turn
        _post("yahtzee games/turn scratch keeps bonus", "yahtzee/games/turn",
              {"scorecard": BONUS, "dice": [4, 4, 4, 4, 4], "throw": 3, "box": "chance",
               "scratch": True}),
        _post("yahtzee games/turn last box", "yahtzee/games/turn",
              {"scorecard": {"boxes": {**LATE["boxes"], "large_straight": 40,
                                       "five_of_a_kind": 0}},
               "dice": [6, 6, 5, 5, 4], "throw": 3, "box": "chance"}),
        _post("generala games/turn instant win", "generala/games/turn",
              {"dice": [3, 3, 3, 3, 3], "throw": 1, "box": None}),
        _post("yams games/turn column", "yams/games/turn",
              {"scorecard": YAMS_COLUMNS, "dice": [4, 4, 4, 4, 2], "throw": 2,
               "box": "fours", "column": 1, **COLUMNS}),
        _post("maxi_yatzy games/turn saves throws", "maxi_yatzy/games/turn",
              {"dice": [6, 6, 6, 5, 5, 1], "throw": 1, "box": "sixes"}),
        _post("bozo games/turn em baixo", "bozo/games/turn",
              {"dice": [1, 1, 1, 2, 6], "throw": 2, "box": "sixes", "em_baixo": True}),
        _post("yahtzee games/turn illegal (409)", "yahtzee/games/turn",
              {"scorecard": {"boxes": {"ones": 3}}, "dice": [1, 1, 1, 2, 3], "throw": 1,
               "box": "ones"}),
        _post("yahtzee games/turn missing throw (422)", "yahtzee/games/turn",
              {"dice": [1, 1, 1, 2, 3], "box": "ones"}),
        _post("generala games/turn/batch item refused", "generala/games/turn/batch", [
            {"dice": [1, 1, 1, 2, 3], "throw": 1, "box": "ones"},
            {"dice": [1, 1, 1, 2, 3], "throw": 1, "box": "villa"}]),
        # games/validate
        _post("yacht games/validate broken game", "yacht/games/validate", BROKEN_GAME),
        _post("generala games/validate with keeps", "generala/games/validate", GENERALA_GAME),
        _post("bozo games/validate em baixo", "bozo/games/validate", BOZO_GAME),
        _post("yams games/validate columns", "yams/games/validate", {
            "players": [{"turns": [_turn([[1, 1, 1, 2, 3]], "ones", column=1),
                                   _turn([[5, 5, 5, 5, 5]], "five_of_a_kind", column=4)]}],
            **COLUMNS}),
        _post("yacht games/validate/batch broken", "yacht/games/validate/batch",
              [BROKEN_GAME, {"players": [{"turns": []}]}]),
        _post("yacht games/validate no players (422)", "yacht/games/validate",
              {"players": []}),
        # moves/suggest
        _post("yacht moves/suggest coach", "yacht/moves/suggest",
              {"dice": [3, 3, 3, 1, 5], "throw": 1, "coach": True}),
        _post("yahtzee moves/suggest limit", "yahtzee/moves/suggest",
              {"dice": [1, 2, 3, 4, 6], "throw": 2, "scorecard": BONUS, "limit": 3}),
        _post("yahtzee moves/suggest last throw", "yahtzee/moves/suggest",
              {"dice": [4, 4, 4, 4, 4], "throw": 3, "scorecard": BONUS}),
        _post("yahtzee moves/suggest win", "yahtzee/moves/suggest",
              {"dice": [1, 2, 3, 4, 6], "throw": 2, "scorecard": LATE, "objective": "win",
               "opponents": [{"boxes": {**LATE["boxes"], "small_straight": 0,
                                        "large_straight": 40}}]}),
        _post("yahtzee moves/suggest target", "yahtzee/moves/suggest",
              {"dice": [1, 2, 3, 4, 6], "throw": 2, "scorecard": LATE,
               "objective": "target", "target": 230}),
        _post("generala moves/suggest servida", "generala/moves/suggest",
              {"dice": [4, 4, 4, 4, 4], "throw": 1}),
        _post("bozo moves/suggest em baixo", "bozo/moves/suggest",
              {"dice": [1, 1, 2, 3, 6], "throw": 1, "coach": True, "limit": 4}),
        _post("yams moves/suggest columns", "yams/moves/suggest",
              {"dice": [3, 3, 3, 4, 4], "throw": 1, "scorecard": YAMS_COLUMNS, **COLUMNS,
               "limit": 5}),
        _post("maxi_yatzy moves/suggest", "maxi_yatzy/moves/suggest",
              {"dice": [1, 2, 3, 4, 5, 6], "throw": 1, "limit": 5}),
        _post("yahtzee moves/suggest win without opponents (409)", "yahtzee/moves/suggest",
              {"dice": [1, 2, 3, 4, 6], "throw": 2, "objective": "win"}),
        _post("yahtzee moves/suggest no throw (422)", "yahtzee/moves/suggest",
              {"dice": [1, 2, 3, 4, 6]}),
        # moves/bot
        *[_post(f"yahtzee moves/bot {level}", "yahtzee/moves/bot",
                {"dice": [1, 2, 3, 4, 6], "throw": 1, "scorecard": BONUS, "level": level,
                 "seed": seed})
          for level, seed in (("beginner", 1), ("casual", 2), ("strong", 3), ("expert", 4))],
        _post("generala moves/bot last throw", "generala/moves/bot",
              {"dice": [2, 2, 3, 3, 6], "throw": 3, "level": "casual", "seed": 11}),
        _post("yahtzee moves/bot win", "yahtzee/moves/bot",
              {"dice": [1, 2, 3, 4, 6], "throw": 2, "scorecard": LATE, "level": "strong",
               "seed": 5, "objective": "win", "opponents": [{"boxes": LATE["boxes"]}]}),
        _post("yahtzee moves/bot unknown level (422)", "yahtzee/moves/bot",
              {"dice": [1, 2, 3, 4, 6], "throw": 1, "level": "grandmaster", "seed": 1}),
        # positions/value
        _post("yahtzee positions/value start histogram", "yahtzee/positions/value",
              {"histogram": True, "at_least": [300, 150, 200, 150]}),
        _post("yahtzee positions/value late mid-turn", "yahtzee/positions/value",
              {"scorecard": LATE, "dice": [6, 6, 6, 2, 1], "throw": 2, "histogram": True}),
        _post("generala positions/value at least", "generala/positions/value",
              {"scorecard": {"boxes": {"sixes": 24, "full_house": 30}}, "at_least": [100]}),
        _post("bozo positions/value em baixo", "bozo/positions/value",
              {"dice": [1, 1, 2, 3, 6], "throw": 1, "em_baixo": True}),
        _post("generala positions/value game over (409)", "generala/positions/value",
              {"scorecard": {"boxes": {"five_of_a_kind": 50}, "won": True}}),
        _post("generala positions/value dice without throw (409)",
              "generala/positions/value", {"dice": [1, 2, 3, 4, 5]}),
        # games/analyze
        _post("generala games/analyze with keeps", "generala/games/analyze", GENERALA_GAME),
        _post("bozo games/analyze em baixo", "bozo/games/analyze", BOZO_GAME),
        _post("yacht games/analyze broken (409)", "yacht/games/analyze", BROKEN_GAME),
        # games/win-probability
        _post("generala games/win-probability three players", "generala/games/win-probability",
              {"players": [{"name": "ana", "scorecard": {"boxes": {"sixes": 24}}},
                           {"scorecard": {"boxes": {"full_house": 30}}}, {}]}),
        _post("yahtzee games/win-probability late with dice",
              "yahtzee/games/win-probability",
              {"players": [{"scorecard": LATE},
                           {"scorecard": {"boxes": {**LATE["boxes"], "sixes": 24}}}],
               "to_move": 1, "dice": [6, 6, 1, 2, 3], "throw": 1}),
        _post("bozo games/win-probability em baixo", "bozo/games/win-probability",
              {"players": [{}, {}], "dice": [1, 1, 2, 3, 6], "throw": 1, "em_baixo": True}),
        _post("generala games/win-probability to_move (409)",
              "generala/games/win-probability", {"players": [{}], "to_move": 3}),
    ]


def corpus() -> list[Case]:
    """The fixed corpus: every case, each name once."""
    cases = _variant_cases() + _special_cases()
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "a case name is used twice"
    return cases


def _request_digest(case: Case) -> str:
    sent = json.dumps([case.method, case.path, case.body, case.content_type], sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(sent.encode()).hexdigest()


def _answer(client: Any, case: Case) -> tuple[int, bytes]:
    if case.method == "GET":
        resp = client.get(case.path)
    elif isinstance(case.body, str):  # a body sent as it is written
        resp = client.post(case.path, data=case.body, content_type=case.content_type)
    else:
        resp = client.post(case.path, json=case.body)
    return resp.status_code, resp.get_data()


def _answer_digest(status: int, body: bytes) -> str:
    return hashlib.sha256(f"{status}\n".encode() + body).hexdigest()


def test_every_answer_is_the_one_recorded(client):
    """Each case's status and body hash to what the file holds (UPDATE_ANSWER_HASHES=1
    records them)."""
    found = {}
    for case in corpus():
        status, body = _answer(client, case)
        assert status != 202, f"{case.name}: a table was being built"
        found[case.name] = {"request": _request_digest(case),
                            "answer": _answer_digest(status, body), "status": status}
    if UPDATE:
        HASHES.write_text(json.dumps(dict(sorted(found.items())), indent=1) + "\n")
    recorded = json.loads(HASHES.read_text())
    assert sorted(recorded) == sorted(found), "the corpus's cases are not the ones recorded"
    changed_requests = [n for n in found if found[n]["request"] != recorded[n]["request"]]
    assert not changed_requests, f"these cases' requests changed: {changed_requests}"
    changed = {n: (recorded[n]["status"], found[n]["status"]) for n in found
               if found[n]["answer"] != recorded[n]["answer"]}
    assert not changed, f"these answers changed (recorded status, now): {changed}"


def test_the_corpus_asks_every_operation():
    """Every operation of the spec is asked, with a 409 and a 422 among the answers."""
    spec = json.loads(SPEC.read_text())
    templated = {(method.upper(), path.replace("{variant}", "*"))
                 for path, ops in spec["paths"].items() if "{variant}" in path or
                 path == "/v1/variants" for method in ops if method in ("get", "post")}
    asked = set()
    for case in corpus():
        parts = case.path.split("/")
        if len(parts) > 3:
            parts[3] = "*"
        asked.add((case.method, "/".join(parts)))
    assert templated <= asked, templated - asked
    statuses = {v["status"] for v in json.loads(HASHES.read_text()).values()}
    assert {200, 404, 409, 415, 422} <= statuses

"""The fast paths agree with what they shortcut.

A fast request check (`fast_load`) may only accept what the marshmallow schema accepts, and
must then give the same data; whatever it declines goes through the schema. The scoring
endpoints' WSGI fast path (`service.web.fast`) must answer exactly as Flask does.
"""

from __future__ import annotations

import io
import json
import re

import marshmallow as ma
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.advisor.advice.moves import RankedMove
from service.domain.moves import Keep, ScoreBox
from service.domain.variants import ALL_BOX_IDS, VARIANT_IDS, VARIANTS
from service.web.fast import ScoringFastPath
from service.web.schemas.common import AnswerSchema, Rounded
from service.web.schemas.hands import HandScoreRequestSchema
from service.web.schemas.scorecards import ScorecardScoreRequestSchema

odd = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                st.integers(-3, 200))
ints = st.one_of(st.integers(-2, 45), odd)
boxes = st.dictionaries(st.one_of(st.sampled_from(ALL_BOX_IDS), st.text(max_size=4)),
                        st.one_of(st.none(), st.integers(-1, 10_001), odd), max_size=6)
scorecard = st.fixed_dictionaries({}, optional={
    "boxes": st.one_of(boxes, odd), "five_of_a_kind_bonuses": ints, "saved_throws": ints,
    "won": st.one_of(st.booleans(), odd), "columns": st.just([]), "extra": odd})
dice = st.one_of(st.lists(st.one_of(st.integers(0, 7), odd), min_size=4, max_size=7), odd)
hand_request = st.fixed_dictionaries({}, optional={
    "dice": dice, "throw": ints, "scorecard": st.one_of(scorecard, odd),
    "em_baixo": st.one_of(st.booleans(), odd), "options": st.just({}), "extra": odd})
card_request = st.one_of(scorecard, st.fixed_dictionaries({"final": st.one_of(st.booleans(),
                                                                           odd)}))


def holds_float(data: object) -> bool:
    if type(data) is float:
        return True
    if isinstance(data, dict):
        return any(holds_float(v) for v in data.values())
    return isinstance(data, list) and any(holds_float(v) for v in data)


def check_agrees(schema: ma.Schema, data: dict) -> None:
    fast = schema.fast_load(data)
    if fast is None:
        return
    assert schema.load(data) == fast
    # the scoring fast path makes a body's integral floats ints only when fast_load refuses
    assert not holds_float(fast)


@settings(max_examples=600, deadline=None)
@given(hand_request)
def test_fast_hand_check_agrees_with_the_schema(data):
    check_agrees(HandScoreRequestSchema(), data)


@settings(max_examples=400, deadline=None)
@given(card_request)
def test_fast_scorecard_check_agrees_with_the_schema(data):
    check_agrees(ScorecardScoreRequestSchema(), data)


def test_fast_path_takes_the_common_request():
    body = {"dice": [3, 3, 4, 5, 6], "throw": 2,
            "scorecard": {"boxes": {"ones": 2, "full_house": None}, "five_of_a_kind_bonuses": 1}}
    assert HandScoreRequestSchema.fast_load(body) is body
    assert HandScoreRequestSchema.fast_load({**body, "throw": True}) is None
    assert HandScoreRequestSchema.fast_load({**body, "dice": [1, 2, 3, 4, 7]}) is None


# --------------------------------------------------------------------------- the WSGI fast path
# service.web.fast.ScoringFastPath answers hands/score and scorecards/score without Flask's
# dispatch when the request is the common case, and hands everything else to Flask. Its
# answers must be Flask's, byte for byte and header for header.

@st.composite
def scoring_requests(draw):
    """(path, raw body, Content-Type): mostly well-formed requests of a variant (dice of its
    count, its boxes, its options), some of them breaking a rule (a value no hand scores);
    one in five breaks something else: the shape, the media type, the JSON, or is a batch."""
    variant = draw(st.sampled_from(VARIANT_IDS))
    v = VARIANTS[variant]
    broken = draw(st.integers(0, 4)) == 0
    values = (st.one_of(st.none(), st.integers(-1, 60), st.sampled_from([1.0, 4.5, "x"]))
              if broken else st.one_of(st.none(), st.sampled_from([0, 0, 3, 6, 12, 25, 50])))
    sheet = {"boxes": draw(st.dictionaries(st.sampled_from([b.id for b in v.boxes]), values,
                                           max_size=5))}
    if draw(st.booleans()):
        sheet["five_of_a_kind_bonuses"] = draw(st.integers(0, 2))
    options = {}
    if v.options and draw(st.integers(0, 3)) == 0:
        option = draw(st.sampled_from(v.options))
        options[option.name] = draw(st.sampled_from(list(option.choices)))
    if draw(st.booleans()):
        endpoint = "hands/score"
        dice = (st.lists(st.integers(0, 7), min_size=4, max_size=7) if broken
                else st.lists(st.integers(1, 6), min_size=v.dice, max_size=v.dice))
        item = {"dice": draw(dice)}
        if draw(st.booleans()):
            item["throw"] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            item["scorecard"] = sheet
    else:
        endpoint = "scorecards/score"
        item = {**sheet, "final": draw(st.booleans())}
    if options:
        item["options"] = options
    body = [item, item] if broken and draw(st.booleans()) else item
    raw = json.dumps(body).encode()
    if broken and draw(st.booleans()):
        raw = raw.replace(b", ", b".0, ", 1)  # an integer written as a float, or broken JSON
    content_type = "application/json"
    if draw(st.integers(0, 5)) == 0:
        content_type = draw(st.sampled_from([None, "application/json; charset=utf-8",
                                             "application/problem+json", "text/plain"]))
    return f"/v1/variants/{variant}/{endpoint}", raw, content_type


def fast_path_of(app) -> ScoringFastPath:
    (fast,) = [layer for layer in app.extensions["pipeline"]
               if isinstance(layer, ScoringFastPath)]
    return fast


def answer(client, path, raw, content_type):
    headers = {} if content_type is None else {"Content-Type": content_type}
    resp = client.post(path, data=raw, headers=headers)
    # every header but the request id, and what is left of the quota and until when (each
    # request uses one, and the clock goes on)
    return (resp.status, [(k, v) if k != "RateLimit" else (k, re.sub(r"=\d+", "=", v))
                          for k, v in resp.headers.items() if k != "X-Request-ID"],
            resp.get_data())


@settings(max_examples=300, deadline=None)
@given(scoring_requests())
def test_fast_path_answers_as_flask_does(app, request_parts):
    path, raw, content_type = request_parts
    client = app.test_client()
    fast = fast_path_of(app)
    answered = answer(client, path, raw, content_type)
    fast.enabled = False
    try:
        assert answered == answer(client, path, raw, content_type)
    finally:
        fast.enabled = True


@settings(max_examples=100, deadline=None)
@given(st.lists(scoring_requests(), min_size=1, max_size=3))
def test_a_batch_answers_each_item_as_its_single_request_does(app, requests):
    """A batch's items are dumped by the answer schema compiled (`batch.dumped`), the single
    request's by marshmallow's dump through Flask (the fast path off): an item of a batch is
    the single request's answer, byte for byte, but for its problems' pointers, which name
    the item (`/1/boxes/ones`)."""
    client = app.test_client()
    fast = fast_path_of(app)
    fast.enabled = False
    try:
        for path, raw, _ in requests:
            try:
                item = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            single = client.post(path, json=item)
            if type(item) is not dict or single.status_code != 200:
                continue
            batch = client.post(path + "/batch", json=[item, item])
            assert batch.status_code == 200
            expected = []
            for i in range(2):
                answer = orjson.loads(single.get_data())
                for problem in answer.get("problems", ()):
                    problem["pointer"] = f"/{i}{problem['pointer']}"
                expected.append(answer)
            assert batch.get_data() == orjson.dumps(expected)
    finally:
        fast.enabled = True


def test_fast_path_answers_the_common_case_without_flask(app):
    fast = fast_path_of(app)
    flask_app, calls = fast.wsgi_app, []

    def counting(environ, start_response):
        calls.append(environ["PATH_INFO"])
        return flask_app(environ, start_response)

    fast.wsgi_app = counting
    client = app.test_client()
    try:
        hand = {"dice": [6, 6, 6, 6, 6], "throw": 3,
                "scorecard": {"boxes": {"five_of_a_kind": 50, "sixes": 24}}}
        resp = client.post("/v1/variants/yahtzee/hands/score", json=hand)
        assert resp.status_code == 200 and resp.get_json()["joker"] is True
        resp = client.post("/v1/variants/yatzy/scorecards/score",
                           json={"boxes": {"ones": 3}, "final": True})
        assert resp.status_code == 200 and resp.get_json()["total"] == 3
        assert calls == []
        # a batch, a rule broken, a body that is not JSON, a chunked body: Flask answers
        assert client.post("/v1/variants/yahtzee/hands/score/batch",
                           json=[hand]).status_code == 200
        assert client.post("/v1/variants/yahtzee/hands/score",
                           json={"dice": [1, 2, 3, 4, 5, 6]}).status_code == 409
        assert client.post("/v1/variants/yahtzee/hands/score", data=b"{",
                           content_type="application/json").status_code == 422
        chunked = client.post("/v1/variants/yahtzee/hands/score",
                              input_stream=io.BytesIO(json.dumps(hand).encode()),
                              headers={"Transfer-Encoding": "chunked",
                                       "Content-Type": "application/json"},
                              environ_overrides={"wsgi.input_terminated": True})
        assert chunked.status_code == 200
        assert len(calls) == 4
        # the routes' metrics label is the same either way
        resp = client.get("/metrics")
        assert 'endpoint="/v1/variants/<variant:variant>/scorecards/score"' in resp.text
    finally:
        fast.wsgi_app = flask_app


def test_fast_path_puts_the_body_back_for_flask(app):
    """A request Flask answers after the fast path has read its body gets the whole body: a
    list sent to the single operation is read by Flask as a list (not an empty body)."""
    client = app.test_client()
    resp = client.post("/v1/variants/yahtzee/scorecards/score",
                       json=[{"boxes": {"ones": 3}}, {"boxes": {"twos": 4}}])
    assert resp.status_code == 422 and "/batch" in resp.get_json()["detail"]


def test_an_unexpected_error_goes_on_to_flask_and_is_counted(app, monkeypatch):
    """The fast path catches only what it expects (a body that is not JSON, the domain's
    refusals); anything else is Flask's to answer, and shows in /metrics."""
    from service.web import fast
    from service.web.ops import FAST_PATH_UNEXPECTED

    def broken(variant, item):
        raise ZeroDivisionError("a bug")

    key = "hands.HandScoring"
    name, load, _, with_base, dump = fast._ENDPOINTS[key]
    monkeypatch.setitem(fast._ENDPOINTS, key, (name, load, broken, with_base, dump))
    before = FAST_PATH_UNEXPECTED.labels("hands/score", "ZeroDivisionError")._value.get()
    client = app.test_client()
    resp = client.post("/v1/variants/yahtzee/hands/score", json={"dice": [1, 2, 3, 4, 5]})
    assert resp.status_code == 200  # Flask's own view answered it
    after = FAST_PATH_UNEXPECTED.labels("hands/score", "ZeroDivisionError")._value.get()
    assert after == before + 1
    assert "fast_path_unexpected_errors_total" in client.get("/metrics").text


class _Inner(ma.Schema):
    n = ma.fields.Integer(required=True)
    flag = ma.fields.Boolean(required=True)


class _Dumped(ma.Schema):
    name = ma.fields.String(required=True)
    count = ma.fields.Integer(required=True)
    note = ma.fields.String()
    ratio = ma.fields.Float(required=True)
    tags = ma.fields.List(ma.fields.Integer(), required=True)
    inner = ma.fields.Nested(_Inner, required=True)
    inners = ma.fields.List(ma.fields.Nested(_Inner), required=True)
    options = ma.fields.Dict(required=True)
    level = ma.fields.Integer(dump_default=3)
    renamed = ma.fields.Integer(data_key="other", required=True)
    rounded = Rounded(3, required=True)  # a field that writes its values itself
    share = ma.fields.Float(attribute="extra.share")  # read by a path
    # read by a path of attributes, at once from an object holding an object
    held = ma.fields.Integer(attribute="holder.n", required=True)


class _Obj:
    def __init__(self, **kwargs: object) -> None:
        self.__dict__.update(kwargs)


_values = {"name": st.one_of(st.text(max_size=3), st.none()),
           "count": st.one_of(st.integers(), st.booleans(), st.none()),
           "note": st.text(max_size=3), "ratio": st.one_of(st.integers(-5, 5), st.floats(
               allow_nan=False)),
           "tags": st.lists(st.one_of(st.integers(), st.booleans(), st.none()), max_size=3),
           "inner": st.fixed_dictionaries({"n": st.one_of(st.integers(), st.booleans()),
                                           "flag": st.one_of(st.booleans(), st.integers())},
                                          optional={"extra": st.integers()}),
           "options": st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
           "level": st.integers(), "renamed": st.integers(),
           "rounded": st.floats(-1e6, 1e6), "extra": st.fixed_dictionaries(
               {}, optional={"share": st.floats(0, 1), "other": st.integers()})}
_values["inners"] = st.lists(_values["inner"], max_size=2)
#: what holds `held`: an object (with `n` or without), a dict, or None
_values["holder"] = st.one_of(st.none(), st.builds(lambda n: _Obj(n=n), st.integers()),
                              st.just(_Obj()), st.fixed_dictionaries({"n": st.integers()}))


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional=_values), st.booleans())
def test_compiled_dump_dumps_as_marshmallow_does(data, as_object):
    """The scoring fast path's compiled dump gives what the schema's dump gives: fields in the
    schema's order under their data keys, a lacking field left out or its default given, and
    values of the field's type; whether the object is a dict with every field, one lacking
    some, or an object with attributes."""
    from service.web.schemas.common import compiled_dump

    obj = _Obj(**data) if as_object else data
    expected = _Dumped().dump(obj)
    got = compiled_dump(_Dumped)(obj)
    assert json.dumps(got) == json.dumps(expected)
    assert compiled_dump(_Dumped(many=True))([obj, obj]) == [got, got]


class _Repeated(AnswerSchema):
    repeats = True
    name = ma.fields.String(required=True)
    count = ma.fields.Integer(required=True, allow_none=True)
    flag = ma.fields.Boolean(required=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(_Obj, name=st.sampled_from(["a", "b"]),
                          count=st.one_of(st.none(), st.integers(0, 3), st.booleans()),
                          flag=st.one_of(st.booleans(), st.integers(0, 1))), max_size=8))
def test_a_list_of_repeating_objects_is_written_as_marshmallow_writes_it(objs):
    """A list of a `repeats` schema's objects (a hand's placements, a sheet's boxes) is
    written once per distinct object and then remembered: the JSON is marshmallow's, values
    that compare equal (an Integer's True and 1, a Boolean's 1 and True) included, and an
    object changed after it was written is written as it is now."""
    from service.web.schemas.common import _compiled_list

    dump = _compiled_list(_Repeated)
    expected = orjson.dumps(_Repeated(many=True).dump(objs))
    assert orjson.dumps(dump(objs, keep_none=False)) == expected
    assert orjson.dumps(dump(objs, keep_none=False)) == expected  # remembered
    if objs:
        objs[0].count = 7
        assert orjson.dumps(dump(objs, keep_none=False)) == orjson.dumps(
            _Repeated(many=True).dump(objs))


def test_what_a_list_of_repeating_objects_remembers_is_bounded(monkeypatch):
    """The JSON remembered for a `repeats` schema is emptied when it holds `REMEMBERED`
    objects' (distinct values sent on purpose cannot grow it), and a schema whose fields are
    not all required plain attributes cannot repeat."""
    from service.web.schemas import common

    monkeypatch.setattr(common, "REMEMBERED", 4)

    class Few(AnswerSchema):
        repeats = True
        count = ma.fields.Integer(required=True)

    dump = common._compiled_list(Few)
    memory = dump.__globals__["_memory"]
    for n in range(10):
        assert orjson.dumps(dump([_Obj(count=n)], keep_none=False)) == b'[{"count":%d}]' % n
        assert 0 < len(memory) <= 4

    class Optional(AnswerSchema):
        repeats = True
        count = ma.fields.Integer()

    with pytest.raises(TypeError, match="repeats"):
        common._compiled_list(Optional)


_keep = st.builds(Keep, dice=st.lists(st.integers(1, 6), max_size=4).map(tuple),
                  em_baixo=st.one_of(st.none(), st.booleans()))
_score_box = st.builds(
    ScoreBox, box=st.sampled_from(["ones", "chance", "five_of_a_kind"]),
    column=st.one_of(st.none(), st.integers(1, 4)), score=st.integers(0, 50),
    five_of_a_kind_bonus=st.sampled_from([0, 100]), upper_bonus=st.sampled_from([0, 35]),
    joker=st.booleans(), wins_game=st.booleans())
_move = st.builds(
    RankedMove, move=st.one_of(_keep, _score_box),
    expected_final_score=st.floats(0, 1000),
    regret=st.floats(0, 100), rank=st.integers(1, 40), tie=st.booleans(),
    measures=st.fixed_dictionaries({}, optional={"win_share": st.floats(0, 1),
                                                 "target_probability": st.floats(0, 1)}))


@settings(max_examples=300, deadline=None)
@given(_move)
def test_a_move_is_written_as_its_schema_writes_it(move):
    """moves/suggest writes its moves with their schemas' compiled dumps (a suggestion has
    some 30): the same JSON as marshmallow's dump of the move's kind, the objectives'
    figures (read from `measures`) and the rounding included."""
    from service.web.schemas.common import MoveUnionField
    from service.web.schemas.moves import MOVE, KeepMoveSchema, ScoreMoveSchema

    schema = KeepMoveSchema() if move.move.action == "keep" else ScoreMoveSchema()
    field = MoveUnionField(MOVE)
    assert json.dumps(field.serialize("m", {"m": move})) == json.dumps(schema.dump(move))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from([("yahtzee", None), ("generala", None),
                                               ("bozo", None), ("yahtzee", {"columns": True})]))
def test_a_turn_played_is_written_compiled_as_marshmallow_writes_it(seed, config):
    """games/turn's answer holds the turn's outcome and its schema reads the turn's figures
    from there (`outcome.dice`, `outcome.sheet.won`, the outcome itself as `earned`): its
    compiled dump writes every turn of a game as marshmallow's dump does."""
    from service.domain.scoring import empty_sheet
    from service.domain.turn import TurnResult, play_turn
    from service.web.schemas.common import compiled_dump
    from service.web.schemas.games import TurnResultSchema
    from tests.domain.gamegen import random_game

    variant, options = config
    gen = random_game(variant, seed, players=1, options=options, scratches=0.1)
    rs, sheet = gen.rs, empty_sheet(gen.rs)
    schema, dump = TurnResultSchema(), compiled_dump(TurnResultSchema)
    for turn in gen.body["players"][0]["turns"]:
        outcome = play_turn(rs, sheet, turn["throws"][-1], len(turn["throws"]),
                            turn.get("box"), turn.get("column"),
                            bool(turn.get("em_baixo")), scratch=bool(turn.get("scratch")))
        result = TurnResult.of(rs, outcome)
        assert json.dumps(dump(result)) == json.dumps(schema.dump(result))
        sheet = outcome.sheet


#: A generala game with a turn of each status: ok, illegal (an unknown box: not applied),
#: not_scored (a die of 7), after_end (after the other player's Generala servida)
_EVERY_STATUS = {"players": [
    {"turns": [{"throws": [[1, 1, 2, 3, 4]], "box": "ones", "points": 2},
               {"throws": [[1, 2, 3, 4, 7]], "box": "twos", "points": 2},
               {"throws": [[5, 5, 2, 3, 4]], "box": "fives"}]},
    {"turns": [{"throws": [[3, 3, 1, 2, 4]], "box": "chance"},
               {"throws": [[6, 6, 6, 6, 6]], "box": "five_of_a_kind"}]},
]}


@pytest.mark.parametrize("game", [_EVERY_STATUS, "random"])
def test_a_replayed_game_is_written_compiled_as_marshmallow_writes_it(game):
    """games/validate's turn records are the replay's `TurnRecord`s, read by paths and
    properties (`outcome` as `earned`, `throw_count`, `dice`): the compiled dump of its
    answer writes them as marshmallow's dump does, a turn not applied (`outcome` None)
    included."""
    from service.domain.games import validate_game
    from service.domain.rules import effective_rules
    from service.web.schemas.common import compiled_dump
    from service.web.schemas.games import GameValidationSchema
    from tests.domain.gamegen import random_game

    if game == "random":
        rs, game = effective_rules("bozo"), random_game("bozo", 7, players=3,
                                                        scratches=0.1).body
    else:
        rs = effective_rules("generala")
    answer = validate_game(rs, game)
    statuses = {t.status for p in answer.players for t in p.turns}
    assert game != _EVERY_STATUS or statuses == {"ok", "illegal", "not_scored", "after_end"}
    written = compiled_dump(GameValidationSchema)(answer)
    assert json.dumps(written) == json.dumps(GameValidationSchema().dump(answer))

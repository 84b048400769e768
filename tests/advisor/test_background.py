"""Background builds: the queue on disk (one job per table, bounded, per client), the build
process's choices (fair between clients, least recently used tables removed) and what the
advisor does meanwhile. The build process runs in this process here; tests/live runs it as
the service does."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from service.advisor import Advisor
from service.advisor.tables import build_process as background
from service.advisor.tables import cache as cache_module
from service.advisor.tables.build_process import (
    Builder,
    BuildFailed,
    BuildQueue,
    BuildQueueFull,
    BuildSettings,
    TableBuilding,
    await_build,
    default_build_dir,
)
from service.domain.rules import effective_rules


def house(value: int, variant: str = "generala"):
    """A cheap table of house rules (Generala builds in a few milliseconds; its Full is
    worth 30 by default, so `house(30)` would be the built-in table)."""
    return effective_rules(variant, None, {"boxes": {"full_house": {"value": value}}})


@pytest.fixture
def settings(tmp_path):
    return BuildSettings(tmp_path / "build", tmp_path / "tables", max_queue=4, per_client=2,
                         keep=2, nice=0, threads=1)


@pytest.fixture
def queue(settings):
    return BuildQueue(settings, autostart=False)


def test_one_job_per_table(queue):
    assert queue.submit(house(35), "a") == 1
    assert queue.submit(house(35), "b") == 1  # the same table: the job already waiting
    assert queue.pending(house(35)) and not queue.pending(house(36))
    (job,) = queue.jobs()
    assert job["client"] == "a" and job["fingerprint"] == house(35).fingerprint


def test_queue_and_per_client_limits(queue):
    queue.submit(house(35), "a")
    queue.submit(house(36), "a")
    with pytest.raises(BuildQueueFull) as err:
        queue.submit(house(37), "a")
    assert err.value.per_client and err.value.limit == 2 and err.value.retry_after >= 1
    queue.submit(house(37), "b")
    queue.submit(house(38), "c")
    with pytest.raises(BuildQueueFull) as err:
        queue.submit(house(39), "d")
    assert not err.value.per_client and err.value.limit == 4


def test_admit_is_asked_before_a_new_table_is_queued_and_may_refuse(settings):
    """The web layer charges the tenant's `builds` quota here (`Quotas.admit_build`): asked
    once per new job, with its client, not for a job already waiting; a refusal queues
    nothing."""
    asked = []

    class Refused(Exception):
        pass

    def admit(client: str) -> None:
        asked.append(client)
        if client == "broke":
            raise Refused(client)

    queue = BuildQueue(settings, autostart=False, admit=admit)
    queue.submit(house(35), "tenant-a")
    queue.submit(house(35), "tenant-b")  # already waiting: no new build, nothing charged
    with pytest.raises(Refused):
        queue.submit(house(36), "broke")
    assert asked == ["tenant-a", "broke"]
    assert [j["client"] for j in queue.jobs()] == ["tenant-a"]


def test_retry_after_follows_the_measured_build_time(queue, settings):
    settings.directory.mkdir(parents=True)
    (settings.directory / "builder.json").write_text(json.dumps({"mean_seconds": 2.5}))
    assert queue.retry_after(1) == 3 and queue.retry_after(4) == 10
    assert queue.retry_after(10_000) == 120


def test_builder_is_fair_between_clients(queue, settings):
    for v in (35, 36):
        queue.submit(house(v), "greedy")
    queue.submit(house(45), "other")
    builder = Builder(settings)
    first = builder.next_job()
    assert first["client"] == "greedy" and first["fingerprint"] == house(35).fingerprint
    builder.served["greedy"] = time.monotonic()
    assert builder.next_job()["client"] == "other"


def test_build_writes_the_table_and_drops_the_job(queue, settings):
    queue.submit(house(35), "a")
    builder = Builder(settings)
    builder.build(builder.next_job())
    assert not queue.jobs()
    assert queue.store.has(house(35), ["all"])
    assert json.loads((settings.directory / "builder.json").read_text())["mean_seconds"] > 0


def test_the_queue_s_depth_and_each_build_s_seconds_are_measured(queue, settings):
    """`table_build_queue_depth` (what the queue holds when asked: a scrape of /metrics) and
    `table_build_seconds{kind, outcome}` (each build)."""
    from prometheus_client import REGISTRY

    def built() -> float:
        return REGISTRY.get_sample_value("table_build_seconds_count",
                                         {"kind": "values", "outcome": "built"}) or 0.0

    before = built()
    assert queue.depth() == 0
    queue.submit(house(35), "a")
    queue.submit(house(36), "b")
    assert queue.depth() == 2
    assert REGISTRY.get_sample_value("table_build_queue_depth") == 2
    builder = Builder(settings)
    builder.build(builder.next_job())
    assert REGISTRY.get_sample_value("table_build_queue_depth") == 1
    assert built() == before + 1


def test_a_job_that_cannot_be_built_is_remembered_as_failed(queue, settings):
    queue.submit(house(35), "a")
    path = queue.queue_dir / f"{house(35).fingerprint}.json"
    job = json.loads(path.read_text())
    path.write_text(json.dumps({**job, "variant": "nonsense"}))
    builder = Builder(settings)
    builder.build(builder.next_job())
    assert not queue.jobs() and "nonsense" in queue.failure(house(35))
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.1)
    with pytest.raises(BuildFailed):
        advisor.strategy(house(35))


def test_least_recently_used_tables_are_removed(queue, settings):
    builder = Builder(settings)
    for v in (35, 36, 37):
        queue.submit(house(v), "a")
        builder.build(builder.next_job())
        path = queue.store.path(house(v), "all")
        os.utime(path, (time.time() - 100 + v, time.time() - 100 + v))
    # three built, two kept: 35 (oldest) went when 37 was built
    assert [queue.store.has(house(v), ["all"]) for v in (35, 36, 37)] == [False, True, True]


def test_advisor_waits_then_answers_table_building(queue, settings):
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.2)
    started = time.monotonic()
    with pytest.raises(TableBuilding) as err:
        advisor.suggest(house(35), [1, 2, 3, 4, 5], 1, client="a")
    assert 0.2 <= time.monotonic() - started < 2
    assert err.value.retry_after >= 1 and queue.pending(house(35))
    Builder(settings).build(queue.jobs()[0])
    result = advisor.suggest(house(35), [1, 2, 3, 4, 5], 1, client="a")
    assert result.best
    st = advisor.strategy(house(35))
    assert isinstance(st.parts[0].solution.values, np.memmap)  # mapped from the file


def test_a_mapped_table_removed_from_disk_is_dropped(queue, settings, monkeypatch):
    monkeypatch.setattr(cache_module, "RECHECK_SECONDS", 0.0)
    queue.submit(house(35), "a")
    Builder(settings).build(queue.jobs()[0])
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.1)
    assert advisor.strategy(house(35)) is advisor.cache.lookup(house(35).fingerprint)
    queue.store.path(house(35), "all").unlink()
    assert advisor.cache.lookup(house(35).fingerprint) is None


def test_builder_leaves_when_its_owner_is_gone_and_only_one_runs(settings):
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    assert Builder(settings, owner=dead).run() == 0  # returns at once: owner gone
    queue = BuildQueue(settings, autostart=False)
    assert not queue.builder_running()
    import fcntl

    with open(settings.directory / "builder.lock", "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert queue.builder_running()
        assert Builder(settings).run() == 0  # the lock is taken: exits


def test_the_build_process_a_worker_starts_builds_wherever_the_server_runs(
        settings, tmp_path, monkeypatch):
    """When no build process runs (the one gunicorn.conf.py forks has died), a worker's
    `submit` starts one (`ensure_builder`), and that process imports and builds, whatever
    the server's working directory. It once had the `service` folder itself on its path,
    where service/secrets.py hid the standard library's `secrets`: numpy failed to import,
    the process exited at once, and no table of new rules was built again in the pod."""
    import signal

    monkeypatch.chdir(tmp_path)  # not the repository: `service` is found on the path alone
    queue = BuildQueue(settings)  # autostart, as in a worker
    assert not queue.builder_running()
    try:
        assert queue.submit(house(35), "a") == 1
        deadline, gone = time.monotonic() + 180, None
        while queue.pending(house(35)):
            now = time.monotonic()
            assert now < deadline, "the build process built nothing"
            if queue.builder_running():
                gone = None
            else:  # (not yet started, or exited)
                gone = gone or now
                assert now - gone < 30, "no build process runs"
            time.sleep(0.1)
        assert queue.failure(house(35)) is None
        assert queue.store.has(house(35), ["all"])
        assert queue.builder_running()  # waits for more (until idle)
    finally:
        figures = settings.directory / "builder.json"
        if figures.exists():
            os.kill(json.loads(figures.read_bytes())["pid"], signal.SIGTERM)
        deadline = time.monotonic() + 30
        while queue.builder_running() and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not queue.builder_running()


def test_default_build_dir(tmp_path, monkeypatch):
    assert default_build_dir(tmp_path / "tables") == tmp_path / "tables" / "house-rules"
    # a read-only table directory (the image's /app/tables): the temporary directory
    monkeypatch.setattr(background.os, "access", lambda *_: False)
    assert default_build_dir(tmp_path / "tables").parent == Path(tempfile.gettempdir())


def test_tables_beyond_the_size_budget_are_removed(tmp_path):
    # a Generala table is 16 KiB: a budget of 0 MiB keeps only... none beyond the newest
    settings = BuildSettings(tmp_path / "build", tmp_path / "tables", keep=8, keep_mib=0)
    queue = BuildQueue(settings, autostart=False)
    builder = Builder(settings)
    for v in (35, 36):
        queue.submit(house(v), "a")
        builder.build(builder.next_job())
    assert not queue.store.has(house(35), ["all"]) and not queue.store.has(house(36), ["all"])


def test_a_full_queue_is_answered_after_the_wait(queue, settings):
    for v, client in ((35, "a"), (36, "a"), (37, "b"), (38, "b")):
        queue.submit(house(v), client)
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.3)
    started = time.monotonic()
    with pytest.raises(BuildQueueFull):
        advisor.strategy(house(39), client="c")
    assert time.monotonic() - started >= 0.3


# --- analysis tables (moments, start distributions) --------------------------------------

def test_analysis_tables_are_built_by_the_build_process(queue, settings):
    """A position value at the start of a game whose start distribution is missing queues
    its job and answers TableBuilding, and game analysis the moment tables' (each waits for
    its own only); the build process writes them beside the house-rules value tables, and
    the same requests then answer from the memory-mapped files."""
    from service.advisor.analysis.analyst import Analyst

    rs = house(35)
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.1)
    analyst = Analyst(advisor)
    queue.submit(rs, "a")
    Builder(settings).build(queue.jobs()[0])  # the value tables first
    with pytest.raises(TableBuilding) as waiting:
        analyst.position_value(rs, None, None, None)
    assert waiting.value.what == "analysis table (start distribution)"
    assert queue.pending(rs, "start") and not queue.pending(rs, "moments")
    job = queue.jobs()[0]
    assert job["kind"] == "start" and job["client"] == ""
    Builder(settings).build(job)
    assert not queue.jobs()
    assert queue.store.has(rs, ["all-start"]) and not queue.store.has(rs, ["all-m1"])
    pv = analyst.position_value(rs, None, None, None)
    with pytest.raises(TableBuilding) as waiting:
        analyst.moments(analyst.strategy(rs))
    assert waiting.value.what == "analysis table (moments)"
    Builder(settings).build(queue.jobs()[0])
    assert queue.store.has(rs, ["all-m1", "all-m2"])
    mos = analyst.moments(analyst.strategy(rs))
    assert isinstance(mos[0].m1, np.memmap)
    # the start of a game: the exact distribution the build process made, read from disk
    assert pv.distribution.exact and pv.distribution.states == 0
    # the same figures as moments built in process, without a queue
    inline = Analyst(Advisor(settings.table_dir)).position_value(rs, None, None, None)
    assert pv.mean == pytest.approx(inline.mean, abs=1e-9)
    assert pv.sd == pytest.approx(inline.sd, abs=1e-9)


def test_a_game_analysis_of_new_rules_queues_one_build_for_values_and_moments(queue,
                                                                             settings):
    """games/analyze under rules with no table yet queues the moments' job alone, which
    makes the value tables and the moment tables in one pass (`build_moments`): one build
    to wait for, one charged."""
    from service.advisor.analysis.analyst import Analyst
    from service.advisor.analysis.games import analyze

    rs = house(39)
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.05)
    analyst = Analyst(advisor)
    game = {"players": [{"turns": [{"throws": [[1, 2, 3, 4, 5]], "box": "ones"}]}]}
    with pytest.raises(TableBuilding):
        analyze(analyst, rs, game)
    assert [j["kind"] for j in queue.jobs()] == ["moments"]
    Builder(settings).build(queue.jobs()[0])
    assert not queue.jobs() and advisor.ready(rs)
    assert analyze(analyst, rs, game).players[0].decision_count == 1
    assert not queue.jobs()


def test_the_start_of_a_game_of_new_rules_queues_one_build_for_both(queue, settings):
    """positions/value at the start of a game of rules with no table yet queues one job, the
    start distribution's, which makes the value tables first: the answer waits for one build,
    not two (issue 33: 9.1 s for YAHTZEE house rules; issue 45: one job hand-off and one
    build charged), and not for the moment tables, which it does not read."""
    from service.advisor.analysis.analyst import Analyst

    rs = house(37)
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.05)
    analyst = Analyst(advisor)
    with pytest.raises(TableBuilding):
        analyst.position_value(rs, None, None, None)
    assert [j["kind"] for j in queue.jobs()] == ["start"]
    Builder(settings).build(queue.jobs()[0])
    assert not queue.jobs()
    assert advisor.ready(rs)  # the value tables too
    pv = analyst.position_value(rs, None, None, None)
    assert pv.distribution.exact and pv.distribution.states == 0
    # a position after the start needs no analysis job: nothing is queued for it
    rs2 = house(38)
    queue.submit(rs2, "a")
    Builder(settings).build(queue.jobs()[0])
    from service.domain.scoring import parse_scorecard

    sheet = parse_scorecard(rs2, {"boxes": {"ones": 2}})
    assert analyst.position_value(rs2, sheet, None, None).distribution.exact
    assert not queue.jobs()


def test_a_failed_analysis_build_is_an_error_not_a_new_build(queue, settings):
    from service.advisor.analysis.analyst import Analyst

    rs = house(36)
    queue.submit(rs, "a")
    Builder(settings).build(queue.jobs()[0])
    analyst = Analyst(Advisor(settings.table_dir, builds=queue, build_wait=0.05))
    with pytest.raises(TableBuilding):
        analyst.position_value(rs, None, None, None)
    path = queue.queue_dir / f"{rs.fingerprint}-start.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "kind": "nonsense"}))
    Builder(settings).build(queue.jobs()[0])
    assert "nonsense" in queue.failure(rs, "start") and queue.failure(rs) is None
    with pytest.raises(BuildFailed):
        analyst.position_value(rs, None, None, None)


def test_analysis_of_a_builtin_goes_to_the_build_dir_when_its_tables_are_read_only(
        queue, settings, monkeypatch):
    """A container's table directory is read-only: the build process writes a built-in
    variant's moment tables into the build directory, and the workers find them there."""
    from service.advisor.analysis.analyst import Analyst

    monkeypatch.setattr(background, "_writable", lambda store: False)
    rs = effective_rules("generala")
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.05)
    advisor.warm(["generala"])  # the value tables, as the master loads them
    analyst = Analyst(advisor)
    with pytest.raises(TableBuilding):
        analyst.position_value(rs, None, None, None)
    Builder(settings).build(queue.jobs()[0])
    assert queue.store.has(rs, ["all-start"]) and not advisor.store.has(rs, ["all-start"])
    pv = analyst.position_value(rs, None, None, None)
    with pytest.raises(TableBuilding):
        analyst.moments(analyst.strategy(rs))
    Builder(settings).build(queue.jobs()[0])
    assert queue.store.has(rs, ["all-m1", "all-m2"])
    assert not advisor.store.has(rs, ["all-m1"])
    assert isinstance(analyst.moments(analyst.strategy(rs))[0].m2, np.memmap)
    assert pv.distribution.exact
    assert pv.mean == pytest.approx(pv.distribution.mean, abs=1e-6)


def test_analysis_saved_in_process_skips_a_read_only_directory(tmp_path):
    """Without a build queue (the command line, tests) moments and start distributions are
    computed here; a directory that refuses writes is skipped, not an error."""
    from service.advisor.analysis.analyst import Analyst
    from service.advisor.tables.store import TableStore

    class ReadOnly(TableStore):
        def save(self, rs, part, values):
            raise PermissionError(13, "Read-only file system")

    advisor = Advisor(tmp_path / "tables")
    advisor.warm(["general_11"])
    advisor.stores.store = ReadOnly(tmp_path / "tables")
    analyst = Analyst(advisor)
    pv = analyst.position_value(effective_rules("general_11"), None, None, None)
    assert pv.exact and pv.distribution.exact
    assert not list((tmp_path / "tables").glob("*-m1-*"))


def test_retry_after_follows_the_build_process_figures_for_that_kind(queue):
    """Before any build: each kind's default (values 1 s, start 1.5 s, moments 2 s); then the
    build process's mean for that kind, the mean of all for the jobs ahead; a damaged
    figures file reads as the default."""
    assert queue.retry_after(1, "values") == 1
    assert queue.retry_after(1, "moments") == 2
    assert queue.retry_after(3, "start") == 6  # 1.5 + 2 x 2.0 ahead
    figures = queue.directory / "builder.json"
    queue.directory.mkdir(parents=True, exist_ok=True)
    figures.write_text(json.dumps({"mean_seconds": 0.4, "kinds": {"moments": 3.2}}))
    assert queue.retry_after(1, "moments") == 4 and queue.retry_after(2, "moments") == 4
    assert queue.retry_after(1, "values") == 1 and queue.retry_after(1, "start") == 2
    figures.write_text(json.dumps({"mean_seconds": "x", "kinds": {"moments": None}}))
    assert queue.retry_after(1, "moments") == 2 and queue.retry_after(1) == 2
    figures.write_text("[]")
    assert queue.retry_after(1, "values") == 1


def test_a_requests_waits_share_one_budget(queue):
    """Within a request (the front door sets `caller.WAITS`), the waits for its tables share
    one ADVISOR_BUILD_WAIT: a second table waited for after the first gives up at the same
    deadline, not `wait` later."""
    from service.caller import WAITS

    budget = WAITS.set([])
    try:
        began = time.monotonic()
        for kind in ("values", "moments"):
            with pytest.raises(TableBuilding):
                await_build(queue, house(44), lambda: None, kind=kind, client="a", wait=0.4)
        assert time.monotonic() - began < 0.7  # one wait of 0.4 s, not two
    finally:
        WAITS.reset(budget)
    began = time.monotonic()  # outside a request: each wait its own
    with pytest.raises(TableBuilding):
        await_build(queue, house(45), lambda: None, client="b", wait=0.2)
    assert time.monotonic() - began >= 0.2


def test_retry_after_counts_what_the_job_being_built_has_done_already(queue):
    """While the build process builds this very job, Retry-After is what is left of its
    kind's mean, not the whole of it."""
    queue.directory.mkdir(parents=True, exist_ok=True)
    figures = queue.directory / "builder.json"
    figures.write_text(json.dumps({"mean_seconds": 1.0, "kinds": {"moments": 5.0},
                                   "current": {"job": "abc-moments",
                                               "started": time.time() - 3.2}}))
    assert queue.retry_after(1, "moments", "abc-moments") == 2  # 5 - 3.2, rounded up
    assert queue.retry_after(1, "moments", "other-moments") == 5  # not the one being built
    assert queue.retry_after(2, "moments", "abc-moments") == 3  # and one more ahead
    figures.write_text(json.dumps({"kinds": {"moments": 5.0},
                                   "current": {"job": "abc-moments", "started": 0}}))
    assert queue.retry_after(1, "moments", "abc-moments") == 1  # overdue: at least 1 s


def test_the_build_process_says_which_job_it_builds(queue, settings):
    rs = house(46)
    queue.submit(rs, "a")
    builder = Builder(settings)
    builder.build(queue.jobs()[0])
    figures = queue.figures()
    assert figures["current"] is None and figures["kinds"]["values"] > 0

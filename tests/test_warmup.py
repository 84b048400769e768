"""The server's warm-up (service/warmup.py): the marker that tells numba's cache holds
the kernels for this CPU, the quick start it allows, and the deferred start's 202 and
readiness. The marker goes to a directory of the test's own (`cache_dir`), so numba's real
cache is read but never marked."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from service.advisor import Advisor
from service.advisor.analysis.analyst import Analyst
from service.advisor.tables.build_process import TableBuilding
from service.domain.rules import effective_rules
from service.warmup import Warmup, kernel_cache_dir, kernel_key, sources_stamp

VARIANTS = ("bozo",)


def _warmup(tables: Path, marks: Path, variants: tuple[str, ...] = VARIANTS,
            key=kernel_key) -> Warmup:
    advisor = Advisor(tables, threads=1)
    return Warmup(advisor, Analyst(advisor, threads=1), variants, cache_dir=lambda: marks,
                  kernel_key=key)


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> tuple[Path, Path]:
    """(table directory, marker directory) after one whole warm-up of bozo."""
    base = tmp_path_factory.mktemp("warmup")
    warmup = _warmup(base / "tables", base / "marks")
    assert not warmup.quick() and warmup.tables_missing() == ["bozo"]
    times = warmup.run()
    assert warmup.done and {"bozo", "bozo analysis", "kernels"} <= set(times)
    return base / "tables", base / "marks"


def test_the_key_is_numbas_own_and_the_sources():
    key = kernel_key()
    from numba.core.registry import cpu_target

    assert (key["triple"], key["cpu"], key["features"]) == \
        cpu_target.target_context.codegen().magic_tuple()
    assert key["sources"] == sources_stamp() and len(key["sources"]) == 32
    # the marker sits beside the kernels' compiled code, where numba's dispatcher says
    from service.advisor.kernels.values import solve_level

    assert kernel_cache_dir() == Path(solve_level.stats.cache_path)


def test_a_whole_warm_up_marks_the_cache_and_the_next_start_is_quick(warmed):
    tables, marks = warmed
    [marker] = marks.glob("warm-*.json")
    data = json.loads(marker.read_bytes())
    assert data["key"] == kernel_key() and data["variants"] == ["bozo"]
    again = _warmup(tables, marks)
    assert again.kernels_compiled() and again.quick() and not again.tables_missing()
    began = time.perf_counter()
    again.run()  # loads only
    assert time.perf_counter() - began < 30


def test_another_cpu_another_numba_or_other_sources_is_a_miss(warmed):
    tables, marks = warmed
    for change in ({"cpu": "skylake-avx512"}, {"features": "+avx2"}, {"numba": "0.1"},
                   {"sources": "0" * 32}):
        other = _warmup(tables, marks, key=lambda c=change: {**kernel_key(), **c})
        assert not other.kernels_compiled() and not other.quick(), change
    # variants the warm-up did not run are not vouched for either
    assert not _warmup(tables, marks, ("bozo", "yams")).kernels_compiled()


def test_a_deferred_start_answers_202_until_the_build_process_is_done(tmp_path, warmed):
    tables, marks = warmed
    cold = _warmup(tmp_path / "tables", tmp_path / "marks")
    cold.defer()
    began = time.monotonic()
    with pytest.raises(TableBuilding) as caught:
        cold.advisor.strategy(effective_rules("bozo"))
    assert 0.9 <= time.monotonic() - began < 10  # waited its build_wait (1 s), no more
    assert 2 <= caught.value.retry_after <= 120
    assert caught.value.detail.startswith("The server is starting")
    assert not cold.ready() and not cold.done
    # a process whose build process has warmed up (tables and marker there) runs the
    # warm-up itself, from disk, at its next request
    warm = _warmup(tables, marks)
    warm.defer()
    assert warm.advisor.strategy(effective_rules("bozo")).exact
    assert warm.done and warm.ready()


def test_inside_the_warm_up_the_gate_lets_its_own_calls_through(tmp_path):
    warmup = _warmup(tmp_path / "tables", tmp_path / "marks", ("yahtzee_basic",))
    warmup.defer()
    warmup.running = True  # as `run` sets it around its calls
    assert warmup.advisor.strategy(effective_rules("yahtzee_basic")).exact

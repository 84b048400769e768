"""Packed table directories (service/advisor/tables/packing.py): what the image ships and a
server unpacks at its start. Every table but the early distributions comes back bit for bit;
those keep every probability and every cumulative probability within 5.3e-10; a second
unpack writes nothing; the service reads a packed ADVISOR_TABLE_DIR through its unpacked
copy."""

from __future__ import annotations

import filecmp
import itertools
import json
import shutil

import numpy as np
import pytest

from service.advisor import Advisor
from service.advisor.analysis.analyst import Analyst
from service.advisor.tables.packing import BLOCK, MANIFEST, is_packed, pack, unpack
from service.advisor.tables.strategies import PROBABILITY_STEP, early_names, pack_step
from service.compose import make_advisor, table_dir
from service.config import Settings
from service.domain.rules import effective_rules

#: Each probability and each cumulative probability of an unpacked distribution is within
#: this of the built one (packing's docstring: one step and the exact sums' rounding).
WITHIN = 5.3e-10


def _save(directory, name, array):
    np.save(directory / f"{name}.npy", array)


def test_every_table_but_probabilities_comes_back_bit_for_bit(tmp_path):
    source, packed, out = tmp_path / "src", tmp_path / "packed", tmp_path / "out"
    source.mkdir()
    rng = np.random.default_rng(7)
    _save(source, "t-f64", rng.normal(size=(3, BLOCK // 2 + 5, 2)))  # more than one block
    _save(source, "t-f32", rng.normal(size=(64, 9)).astype(np.float32))
    _save(source, "t-fortran", np.asfortranarray(rng.normal(size=(17, 5))))
    _save(source, "t-int", rng.integers(-5, 1 << 40, size=1001))
    _save(source, "t-empty", np.zeros((0, 3)))
    shutil.copytree(source, packed)
    before, after = pack(packed, lambda name: 0.0)
    assert before > after > 0
    assert not list(packed.glob("*.npy")) and is_packed(packed)
    assert unpack(packed, out) == 5
    for path in source.glob("*.npy"):
        assert filecmp.cmp(path, out / path.name, shallow=False), path.name
    assert np.load(out / "t-fortran.npy").flags.f_contiguous


def _distributions(rng, count, widest):
    """`count` random distributions of up to `widest` points, end to end (as the early
    tables hold them), with their offsets; some with tiny tails and zeros."""
    widths = rng.integers(1, widest + 1, size=count)
    off = np.concatenate([[0], np.cumsum(widths)])
    data = np.empty(off[-1])
    for a, b in itertools.pairwise(off):
        p = rng.dirichlet(np.full(b - a, 0.3)) * np.exp(-rng.uniform(0, 40, b - a))
        p[rng.random(b - a) < 0.05] = 0.0
        data[a:b] = p / p.sum() if p.sum() else 1.0 / (b - a)
    return data, off


def _worst(data, unpacked, off):
    """The largest error of a probability and of a cumulative probability, per distribution."""
    worst_p = float(np.abs(unpacked - data).max())
    worst_c = 0.0
    for a, b in itertools.pairwise(off):
        worst_c = max(worst_c, float(np.abs(np.cumsum(unpacked[a:b])
                                            - np.cumsum(data[a:b])).max()))
    return worst_p, worst_c


def test_probabilities_are_kept_within_5_3e_10_and_their_sums_too(tmp_path):
    rng = np.random.default_rng(11)
    data, off = _distributions(rng, 3000, 1500)
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    _save(source, "x-all-early-data-v1", data)
    _save(source, "x-all-early-off-v1", off)
    pack(source, pack_step)
    manifest = json.loads((source / MANIFEST).read_text())["tables"]
    assert manifest["x-all-early-data-v1.npy"]["step"] == PROBABILITY_STEP
    assert manifest["x-all-early-off-v1.npy"]["step"] == 0
    unpack(source, out)
    unpacked = np.load(out / "x-all-early-data-v1.npy")
    assert unpacked.dtype == np.float64 and unpacked.shape == data.shape
    worst_p, worst_c = _worst(data, unpacked, off)
    print(f"worst probability {worst_p:.2e}, worst cumulative {worst_c:.2e}")
    assert worst_p <= WITHIN and worst_c <= WITHIN
    assert np.all(unpacked >= 0)
    assert np.array_equal(np.load(out / "x-all-early-off-v1.npy"), off)


def test_only_probabilities_are_kept_to_a_step(tmp_path):
    _save(tmp_path, "x-all-early-data-v1", np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="probabilities"):
        pack(tmp_path, pack_step)


def test_a_second_unpack_writes_nothing_and_another_format_is_refused(tmp_path):
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    _save(source, "t", np.arange(10.0))
    pack(source, pack_step)
    assert unpack(source, out) == 1
    assert unpack(source, out) == 0  # the manifest says it is all there
    (out / MANIFEST).unlink()  # an unpack cut short: the tables there are kept
    assert unpack(source, out) == 0 and (out / MANIFEST).exists()
    manifest = json.loads((source / MANIFEST).read_text())
    (source / MANIFEST).write_text(json.dumps(dict(manifest, format=99)))
    with pytest.raises(ValueError, match="format 99"):
        unpack(source, tmp_path / "other")


@pytest.fixture(scope="module")
def generala_tables(tmp_path_factory):
    """Every table of Generala, as `python -m service.advisor build` makes them."""
    directory = tmp_path_factory.mktemp("generala")
    Analyst(Advisor(directory)).warm(["generala"])
    return directory


def test_the_service_reads_a_packed_directory_through_its_unpacked_copy(generala_tables,
                                                                        tmp_path):
    packed = tmp_path / "packed"
    shutil.copytree(generala_tables, packed)
    pack(packed, pack_step)
    settings = Settings(advisor_table_dir=str(packed), advisor_build_dir=str(tmp_path / "b"),
                        advisor_builds="inline")
    builtin = table_dir(settings)
    assert builtin == tmp_path / "b" / "builtin"
    rs = effective_rules("generala")
    for path in generala_tables.glob("*.npy"):
        if "-early-data-" not in path.name:
            assert filecmp.cmp(path, builtin / path.name, shallow=False), path.name
    # the early distributions: each within 5.3e-10, each cumulative probability too
    original, fresh = Analyst(Advisor(generala_tables)), Analyst(make_advisor(settings))
    a = original.early_futures(original.strategy(rs))
    b = fresh.early_futures(fresh.strategy(rs))
    assert a is not None and b is not None
    assert np.array_equal(a.flat, b.flat) and np.array_equal(a.off, b.off)
    worst_p, worst_c = _worst(np.asarray(a.data), np.asarray(b.data), a.off)
    assert worst_p <= WITHIN and worst_c <= WITHIN
    assert {f"{n}-v1.npy" for n in early_names("all")} <= {
        p.name.split("-", 2)[2] for p in builtin.glob("generala-*.npy")}
    # answered from the unpacked tables, as from the built ones: a mean of points within
    # 1e-6 (at most its points times 5.3e-10 off)
    want = original.position_value(rs, None, None, None)
    got = fresh.position_value(rs, None, None, None)
    assert got.distribution.states == 0  # no pass: from the tables
    assert got.mean == pytest.approx(want.mean, abs=1e-6)
    assert got.sd == pytest.approx(want.sd, abs=1e-6)

"""Trace-driven index streams (``trace: PATH``): the layout, its refusals, the round trip through
the timing model, and ``cxlsim workload --trace``'s statistics. Tests write their traces."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.run import simulate
from cxlsim.workloads import batches, input_batches, load_workload, read_trace, write_trace
from cxlsim.workloads.stream_stats import stream_stats, zipf_exponent
from cxlsim.workloads.trace import parse_trace

SMALL = {"batch_size": 16}
#: per-table rows and bags (unequal tables, one bag of one lookup) of a 4-table workload
PER_TABLE = {"tables": 4, "rows_profile": "per_table", "table_rows": [50, 7, 1000, 3], "bag_size": "per_table",
             "table_bag_sizes": [3, 1, 8, 2], "lookups_per_table": 8, "batch_size": 16}


def written(tmp_path, name="rm1", sets=SMALL, n=3, seed=0, fname="t.npz"):
    w = load_workload(name, sets)
    path = tmp_path / fname
    write_trace(path, batches(w, seed, n, dense=False), w.rows_per_table)
    return w, str(path)


def test_written_trace_reads_back_as_the_stream_it_was_written_from(tmp_path):
    w, path = written(tmp_path, "rm4", PER_TABLE, n=4, seed=3)
    tw = load_workload("rm4", {**PER_TABLE, "trace": path})
    assert tw.rows_per_table == w.rows_per_table and tw.max_bag_sizes == w.max_bag_sizes
    assert tw.params.batch_size == 16 and tw.params.sources["table_rows"] == f"trace ({path})"
    for a, b in zip(batches(w, 3, 4), input_batches(tw, 3, 4), strict=True):
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.offsets, b.offsets)
        assert np.array_equal(a.table_starts, b.table_starts)
        assert np.array_equal(a.dense, b.dense)  # the seed's dense stream, as the generator's


def test_variable_bags_and_inferred_rows(tmp_path):
    sets = {**SMALL, "bag_size": "dlrm_uniform", "bag_dedup": True}
    w = load_workload("rm3", sets)
    path = tmp_path / "v.npz"
    write_trace(path, batches(w, 1, 2, dense=False))  # no `rows`: max index + 1
    tw = load_workload("rm3", {"trace": str(path)})
    trace = read_trace(path)
    assert tw.rows_per_table == tuple(int(i.max()) + 1 for i in trace.indices)
    assert tw.max_bag_sizes == trace.max_bag_sizes and tw.params.lookups_per_table == max(trace.max_bag_sizes)
    for a, b in zip(batches(w, 1, 2, dense=False), input_batches(tw, 1, 2, dense=False), strict=True):
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.offsets, b.offsets)


#: equal tables and fixed bags (rm1), unequal tables (rm4's Criteo sizes), variable de-duplicated bags
ROUND_TRIPS = [("rm1", SMALL), ("rm4", SMALL), ("rm1", {**SMALL, "bag_size": "dlrm_uniform", "bag_dedup": True})]


@pytest.mark.parametrize("system", ["pmem", "cxl"])
@pytest.mark.parametrize("name, sets", ROUND_TRIPS)
def test_a_run_on_the_trace_times_as_the_stream_it_was_written_from(tmp_path, system, name, sets):
    _, path = written(tmp_path, name, sets, n=3, seed=1)
    synthetic = simulate(system, name, batches=2, warmup=0, seed=1, workload_sets=sets, trace=False)
    traced = simulate(system, name, batches=2, warmup=0, seed=1, workload_sets={"trace": path}, trace=False)
    assert traced.batch_times_ns.size == 2
    np.testing.assert_array_equal(traced.batch_times_ns, synthetic.batch_times_ns)
    if name == "rm1" and sets is SMALL:  # a different stream moves it: the test can fail
        other = simulate(system, name, batches=2, warmup=0, seed=2, workload_sets=sets, trace=False)
        assert not np.array_equal(other.batch_times_ns, traced.batch_times_ns)


def test_a_system_set_drives_the_run_and_a_short_trace_is_refused(tmp_path):
    _, path = written(tmp_path, n=3, seed=1)
    r = simulate("pmem", "rm1", batches=2, warmup=0, seed=1, sets={"workload_overrides.trace": path}, trace=False)
    assert r.batch_times_ns.size == 2
    with pytest.raises(ConfigError, match=r"t\.npz: batch_size: the trace holds 3 batch\(es\) of 16 .* needs 4"):
        simulate("pmem", "rm1", batches=3, warmup=0, seed=1, sets={"workload_overrides.trace": path}, trace=False)
    # a larger per-run batch regroups the samples: 48 samples hold one batch of 32, not two
    with pytest.raises(ConfigError, match=r"holds 1 batch\(es\) of 32"):
        simulate("pmem", "rm1", batches=1, warmup=0, seed=1, workload_sets={"trace": path, "batch_size": 32}, trace=False)


def save(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return str(path)


GOOD = {"batch_size": np.int64(2), "t0_indices": np.array([0, 4, 1, 2]), "t0_offsets": np.array([0, 1, 3, 3, 4]),
        "t1_indices": np.array([1, 1]), "t1_lengths": np.array([1, 0, 0, 1])}


def test_good_layout_with_offsets_and_lengths():
    t = parse_trace("x.npz", GOOD)
    assert t.tables == 2 and t.samples == 4 and t.batches() == 2 and t.rows == (5, 2)
    assert t.max_bag_sizes == (2, 1)  # an empty bag is allowed; the bound stays >= 1
    assert np.array_equal(t.offsets[1], [0, 1, 1, 1, 2])


@pytest.mark.parametrize("change, key, needle", [
    ({"batch_size": None}, "batch_size", "missing"),
    ({"t1_indices": None}, "t1_indices", "missing"),
    ({"t0_offsets": None}, "t0_offsets", "t0_offsets or t0_lengths"),
    ({"t0_lengths": np.array([1, 2, 0, 1])}, "t0_lengths", "not both"),
    ({"t0_offsets": np.array([0, 3, 1, 3, 4])}, "t0_offsets", "not monotone: offsets"),
    ({"t0_offsets": np.array([0, 1, 3, 3, 5])}, "t0_offsets", "ends at 5"),
    ({"t0_offsets": np.array([1, 1, 3, 3, 4])}, "t0_offsets", "start at 0"),
    ({"t1_lengths": np.array([1, 2, 0, 0])}, "t1_lengths", "sum to 3"),
    ({"t1_lengths": np.array([2, 0])}, "t1_lengths", "2 bags, but table 0 has 4"),
    ({"t0_indices": np.array([0, -4, 1, 2])}, "t0_indices", "negative row id at position 1"),
    ({"t0_indices": np.array([0.0, 4, 1, 2])}, "t0_indices", "integers"),
    ({"rows": np.array([4, 2])}, "t0_indices", r"row 4 at position 1 is out of range of rows\[0\] = 4"),
    ({"rows": np.array([5])}, "rows", "1 values for 2 tables"),
    ({"batch_size": np.int64(3)}, "batch_size", "not a whole number"),
    ({"t2_offsets": np.array([0])}, "t2_indices", "missing"),
    ({"labels": np.array([1])}, "labels", "unknown key"),
    ({"version": np.int64(2)}, "version", "unsupported"),
    ({"t01_indices": np.array([1])}, "t01_indices", "unknown key"),
])
def test_bad_traces_name_the_file_and_key(tmp_path, capsys, change, key, needle):
    arrays = {**GOOD, **change}
    path = save(tmp_path / "bad.npz", **{k: v for k, v in arrays.items() if v is not None})
    code = main(["workload", "--trace", path])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{path}: {key}: " in err and re.search(needle, err), err


def test_a_table_count_other_than_the_workloads_is_refused(tmp_path, capsys):
    path = save(tmp_path / "two.npz", **GOOD)
    with pytest.raises(ConfigError, match=r"two\.npz: t2_indices: the trace has 2 tables, the workload tables=20"):
        load_workload("rm1", {"trace": path})
    code = main(["run", "--system", "pmem", "--workload", "rm1", "--batches", "1",
                 "--set", f"workload_overrides.trace={path}"])
    assert code == 2 and "two.npz: t2_indices" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"nope\.npz: no such trace file"):
        load_workload("rm1", {"trace": str(tmp_path / "nope.npz")})
    for name, content in (("junk.npz", b"not an archive"), ("cut.npz", open(path, "rb").read()[:100])):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ConfigError, match=rf"{name}: not a readable \.npz archive"):
            load_workload("rm1", {"trace": str(tmp_path / name)})
    np.save(tmp_path / "one.npy", np.arange(3))
    (tmp_path / "one.npy").rename(tmp_path / "one.npz")
    with pytest.raises(ConfigError, match=r"one\.npz: not a readable \.npz archive \(one array"):
        load_workload("rm1", {"trace": str(tmp_path / "one.npz")})
    with pytest.raises(ConfigError, match=r"t\.csv: a trace is a \.npz or \.pt file"):
        load_workload("rm1", {"trace": save(tmp_path / "t.csv", **GOOD)})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.integers(1, 3), st.integers(0, 2**31))
def test_offsets_and_lengths_give_one_trace(sizes, bsz, seed):
    sizes = sizes * bsz  # a whole number of batches
    rng = np.random.default_rng(seed)
    total = int(sum(sizes))
    idx = rng.integers(0, 9, size=total)
    rows = np.array([10])
    off = np.concatenate([[0], np.cumsum(sizes)])
    a = parse_trace("a", {"batch_size": bsz, "t0_indices": idx, "t0_offsets": off, "rows": rows})
    b = parse_trace("b", {"batch_size": bsz, "t0_indices": idx, "t0_lengths": np.array(sizes), "rows": rows})
    assert np.array_equal(a.offsets[0], b.offsets[0]) and a.rows == b.rows == (10,)
    assert a.max_bag_sizes == (max(1, max(sizes)),)


def test_pt_trace_reads_as_the_npz(tmp_path):
    torch = pytest.importorskip("torch")
    _, path = written(tmp_path, n=2)
    with np.load(path) as z:
        doc = {k: torch.from_numpy(np.asarray(z[k])) for k in z.files}
    pt = tmp_path / "t.pt"
    torch.save(doc, pt)
    a, b = read_trace(path), read_trace(pt)
    assert a.rows == b.rows and all(np.array_equal(x, y) for x, y in zip(a.indices, b.indices, strict=True))


def test_writer_cli_and_statistics_comparison(tmp_path, capsys):
    path = tmp_path / "w.npz"
    code = main(["workload", "rm3", "--batches", "3", "--seed", "2", "--set", "batch_size=8",
                 "--write-trace", str(path)])
    assert code == 0 and "wrote 3 batch(es)" in capsys.readouterr().out
    code = main(["workload", "--trace", str(path), "--seed", "2", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["batches"] == 3 and d["tables"] == 20 and d["batch_size"] == 8
    # written from the generator with the same seed: the generator's side is the same stream
    assert d["trace_stats"] == d["synthetic"]
    s = d["trace_stats"]
    assert 0 < s["shared_prev_fraction"] < 1 and s["reuse_distance_batches"]["median"] >= 1
    assert s["distinct_rows_per_batch"]["max"] <= 8 * 20 * 20
    code = main(["workload", "--trace", str(path), "--seed", "3"])  # another seed: another generator stream
    out = capsys.readouterr().out
    assert code == 0 and "Zipf exponent" in out and "reuse distance, p90" in out


def test_stream_statistics_are_what_they_say():
    from cxlsim.workloads.generator import Batch
    from cxlsim.workloads.layout import TableLayout

    def batch(k, rows):
        idx = np.array(rows, np.int64)
        return Batch(k, idx, np.array([0, idx.size]), np.array([[0, idx.size]]), None)

    layout = TableLayout.of([10], 4)
    s = stream_stats([batch(0, [1, 2, 3]), batch(1, [1, 4]), batch(2, [2, 4, 4])], layout)
    assert s["distinct_rows_per_batch"] == {"mean": 7 / 3, "min": 2, "max": 3}
    assert s["shared_prev_fraction"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    # (1, row 1) after 1; (1, row 4) first; (2, row 2) after 2; (2, row 4) after 1
    assert s["reuse_distance_batches"] == {"median": 1.0, "p90": pytest.approx(1.8), "first_touch_fraction": 0.25}
    ranks = np.arange(1, 200)
    rows = np.repeat(ranks, np.maximum(1, np.round(5000 * ranks ** -1.2)).astype(int))
    assert zipf_exponent(rows) == pytest.approx(1.2, abs=0.05)


def test_models_of_the_generators_distribution_refuse_a_trace(tmp_path):
    from cxlsim.crash.scale import scale_overrides

    _, path = written(tmp_path, n=3, seed=1)
    with pytest.raises(ConfigError, match=r"t\.npz: pipeline\.vector_cache_start: steady builds"):
        simulate("ssd", "rm1", batches=1, warmup=0, workload_sets={"trace": path}, trace=False)
    r = simulate("ssd", "rm1", batches=1, warmup=0, workload_sets={"trace": path}, trace=False,
                 sets={"pipeline.vector_cache_start": "empty"})
    assert r.batch_times_ns.size == 1
    with pytest.raises(InputError, match="topology.symmetry: the reduction draws"):
        simulate("cxl", "rm1", batches=1, warmup=0, workload_sets={"trace": path}, trace=False,
                 sets={"topology.gpus_count": 2, "topology.cxl_mems_count": 2, "topology.symmetry": "on"})
    with pytest.raises(ConfigError, match="cannot be scaled"):
        scale_overrides(load_workload("rm1", {"trace": path}), 0.001)
    with pytest.raises(ConfigError, match="cannot be scaled"):
        input_batches(load_workload("rm1", {"trace": path}), row_scale=0.5)


class _FakeTensor:
    """What the .pt reader asks of a tensor (detach, cpu, numpy), over a NumPy array."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def test_pt_reader_takes_a_dict_of_tensors_and_names_a_missing_torch(tmp_path, monkeypatch):
    """The .pt path without torch installed: a stand-in module's ``load`` gives the dict."""
    import types

    from cxlsim.workloads import trace as trace_mod

    pt = tmp_path / "g.pt"
    pt.write_bytes(b"stand-in")
    seen = {}

    def load(path, map_location, weights_only):
        seen.update(path=path, map_location=map_location, weights_only=weights_only)
        return {k: _FakeTensor(v) for k, v in GOOD.items()} | {"batch_size": 2}

    fake = types.SimpleNamespace(load=load)
    real = trace_mod.importlib.import_module
    monkeypatch.setattr(trace_mod.importlib, "import_module", lambda name: fake if name == "torch" else real(name))
    t = read_trace(pt)
    assert seen == {"path": str(pt), "map_location": "cpu", "weights_only": True}
    assert t.rows == parse_trace("x", GOOD).rows and t.batch_size == 2

    def missing(name):
        raise ImportError(name)

    monkeypatch.setattr(trace_mod.importlib, "import_module", missing)
    trace_mod._CACHE.clear()
    with pytest.raises(ConfigError, match=r"g\.pt: a \.pt trace needs torch"):
        read_trace(pt)

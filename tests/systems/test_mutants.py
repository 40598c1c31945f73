"""Tests aimed at realistic bugs the rest of the suite let through (mutation testing): each pins a
mechanism by its closed form or its rule, at the smallest level that shows it.

* static power of the near-data and checkpointing logic is charged over wall time, not busy time;
* the GPU timing table interpolates log-log between batch grid points (and stays monotone);
* ECRec's slowdown carries its parity-update traffic (difference propagation);
* a partial write that hits the write-combining buffer merges there: no read-modify-write;
* a scale-out run charges every GPU's static power, not one GPU's (``energy/model.py``:
  ``gpu.static_energy_J(T)`` for ``gpu.static_energy_J(T, d.gpus)``);
* the lookup bound of a run counts the global batch of every GPU, not one GPU's (``systems/run.py``:
  ``gp = wl.params`` for ``gp = global_wl.params``);
* a fused correction is sized by the next batch's lookups of rows this batch updates.

(The fourth surviving mutant, a serial sweep aborting on an internal error in one point, is killed
by tests/sweep/test_hardening_sweep.py; energy per system × RM is pinned by tests/goldens/test_energy_goldens.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cxlsim.api import simulate
from cxlsim.devices import build_device
from cxlsim.devices.compute.gpu_table import BATCH_GRID
from cxlsim.devices.memory.media.media import AccessStream
from cxlsim.energy.report import energy_detail
from cxlsim.ft import load_scenario, run_scenario

SMALL = {"batch_size": 32}


# ------------------------------------------------------------------ energy: static power over wall time
@pytest.mark.parametrize("system", ["cxl-d", "cxl"])
def test_logic_static_energy_is_static_power_times_wall_time(system):
    r = simulate(system, workload="rm1", batches=2, warmup=1, seed=1, workload_sets=SMALL, trace=False)
    detail = energy_detail(r)
    watts = sum(r.devices[role].params.static_W for role in ("ndp", "ckpt_logic"))
    wall_s = float(np.mean([a.wall_ns for a in r.activity])) * 1e-9
    assert detail["cxl_mem_logic"]["static"] == pytest.approx(watts * wall_s, rel=1e-9)


# ------------------------------------------------------------------ GPU table: log-log between grid points
@pytest.fixture(scope="module")
def gpu():
    model = build_device("gpu/rtx3090")
    assert model.table is not None
    return model


def _shapes(gpu):
    return sorted(gpu.table.rows)[:6]


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_gpu_table_interpolates_log_log_off_the_grid(gpu, direction):
    col = 1 if direction == "forward" else 2
    checked = 0
    for n_in, n_out in _shapes(gpu):
        rows = gpu.table.rows[(n_in, n_out)]
        for (b0, *t0), (b1, *t1) in zip(rows[:-1], rows[1:], strict=True):
            if b1 - b0 < 2:
                continue
            y0, y1 = t0[col - 1], t1[col - 1]
            for b in {b0 + 1, round(math.sqrt(b0 * b1)), b1 - 1}:
                w = math.log(b / b0) / math.log(b1 / b0)
                expected = y0 * (y1 / y0) ** w  # the straight line in log-log space
                assert gpu.layer_ns(n_in, n_out, b, direction) == pytest.approx(expected, rel=1e-9)
                checked += 1
    assert checked > 50


def test_gpu_table_off_grid_stays_between_neighbours_and_monotone(gpu):
    """Dense batches 16 ... 65536 (mostly off the grid): table times never fall as the batch grows,
    and stay between the grid values around them (which equal the formula to the table's 0.1 ns)."""
    batches = sorted(set(np.unique(np.geomspace(BATCH_GRID[0], BATCH_GRID[-1], 400).astype(int))) | set(BATCH_GRID))
    for n_in, n_out in _shapes(gpu):
        for direction in ("forward", "backward"):
            times = [gpu.layer_ns(n_in, n_out, int(b), direction) for b in batches]
            assert all(a <= b * (1 + 1e-12) for a, b in zip(times[:-1], times[1:], strict=True))
            grid = {b: gpu.layer_ns(n_in, n_out, b, direction) for b in BATCH_GRID}
            assert all(grid[b] == pytest.approx(gpu.layer_formula_ns(n_in, n_out, b, direction), abs=0.051)
                       for b in BATCH_GRID)
            for b, t in zip(batches, times, strict=True):
                lo = max(g for g in BATCH_GRID if g <= b)
                hi = min(g for g in BATCH_GRID if g >= b)
                assert grid[lo] * (1 - 1e-12) <= t <= grid[hi] * (1 + 1e-12)


def test_gpu_table_log_log_is_exact_for_a_power_law_between_points(gpu):
    """Between two grid points where time ∝ batch^a, log-log interpolation reproduces the power law
    (a straight line in linear space does not unless a = 1)."""
    n_in, n_out = _shapes(gpu)[0]
    rows = gpu.table.rows[(n_in, n_out)]
    (b0, f0, _), (b1, f1, _) = rows[0], rows[1]
    a = math.log(f1 / f0) / math.log(b1 / b0)
    b = (b0 + b1) // 2
    assert gpu.layer_ns(n_in, n_out, b, "forward") == pytest.approx(f0 * (b / b0) ** a, rel=1e-9)


# ------------------------------------------------------------------ ECRec: parity-update traffic
def test_ecrec_slowdown_is_its_update_traffic_closed_form():
    """No failures: ECRec's overhead is its steady slowdown σ − 1, where σ = 1 + exposed/step and
    the exposed time per step is (parity updates + dense replica) / (servers × NIC): difference
    propagation ships every updated row once more, to its parity server (ECRec, VLDB 2023)."""
    sc = load_scenario("ecrec", [("trace", []), ("schemes", [
        {"name": "ec2", "kind": "ecrec", "k_count": 2, "servers_count": 5, "nic_GBps": 3.125,
         "unique_rows_per_step_count": 8900}])])
    (res,) = run_scenario(sc)["schemes"]
    row_B, dense_B, step_s = sc.model.row_B, sc.model.dense_GB * 1e9, sc.job.step_s
    parity_B = 8900 * row_B  # one more copy of each updated row's change
    exposed_s = (parity_B + dense_B) / (5 * 3.125e9)
    assert res["details"]["extra_traffic_per_step_bytes"] == pytest.approx(parity_B + dense_B, rel=1e-12)
    assert res["overhead_pct"]["save"] == pytest.approx(100 * exposed_s / step_s, rel=1e-6)
    assert res["overhead_pct"]["total"] == pytest.approx(res["overhead_pct"]["save"], rel=1e-9)


# ------------------------------------------------------------------ media: write-combining buffer merge rule
@pytest.mark.parametrize("reference", [False, True])
def test_partial_write_hitting_the_buffer_pays_no_read_modify_write(reference):
    m = build_device("pmem/optane-100")
    unit = m.unit_B
    assert m.params.read_modify_write and m.params.wcb_entries > 0
    state = m.new_state()
    # a 64 B write to a unit not buffered reads the unit first (read-modify-write) ...
    first = m.serve(AccessStream.of(0.0, [0], 64, True), state, 1, reference=reference)
    assert (first.rmw_count, first.media_read_B) == (1, unit)
    # ... a later partial write to the same unit merges into the buffered unit: no media read
    again = m.serve(AccessStream.of(1e5, [64], 64, True), state, 1, reference=reference)
    assert (again.rmw_count, again.media_read_B) == (0, 0.0)
    assert again.buffer_hits_count == 1
    # a partial write to another unit misses, and pays its own read-modify-write
    other = m.serve(AccessStream.of(2e5, [unit * 1000], 64, True), state, 1, reference=reference)
    assert (other.rmw_count, other.media_read_B) == (1, unit)


def test_without_a_buffer_every_partial_write_pays_read_modify_write():
    m = build_device("pmem/optane-100", {"wcb_entries": 0})
    state = m.new_state()
    r = m.serve(AccessStream.of([0.0, 1e5], [0, 64], [64, 64], [True, True]), state, 1)
    assert r.rmw_count == 2 and r.media_read_B == 2 * m.unit_B


# ------------------------------------------------------------------ scale-out: every GPU counted
@pytest.mark.parametrize("gpus", [1, 2, 3])
def test_gpu_static_energy_counts_every_gpu(gpus):
    """Each GPU draws its idle power over the whole batch: gpus × idle_power_W × wall time."""
    r = simulate("cxl", workload="rm1", batches=1, warmup=1, seed=1, workload_sets=SMALL, trace=False,
                 sets=[("topology.gpus_count", gpus)])
    wall_s = float(np.mean([a.wall_ns for a in r.activity])) * 1e-9
    watts = gpus * r.devices["gpu"].params.idle_power_W
    assert energy_detail(r)["gpu"]["static"] == pytest.approx(watts * wall_s, rel=1e-9)


def test_run_lookup_bound_counts_the_global_batch(monkeypatch):
    """The bound on a run's lookups is on what its input streams hold: every GPU's samples. With the
    bound at exactly one GPU's lookups, one GPU runs and two GPUs (the same per-GPU batch) are
    refused, naming the option that sets the work."""
    import cxlsim.systems.run as run_module
    from cxlsim.errors import ConfigError
    from cxlsim.workloads import load_workload

    p = load_workload("rm1", SMALL).params
    batches, warmup = 1, 1
    one_gpu = (warmup + batches + 1) * p.batch_size * p.tables * p.lookups_per_table
    monkeypatch.setattr(run_module, "MAX_RUN_LOOKUPS", one_gpu)
    simulate("cxl", workload="rm1", batches=batches, warmup=warmup, workload_sets=SMALL, trace=False)
    with pytest.raises(ConfigError, match="batches.*2 GPU"):
        simulate("cxl", workload="rm1", batches=batches, warmup=warmup, workload_sets=SMALL, trace=False,
                 sets=[("topology.gpus_count", 2)])


# ------------------------------------------------------------------ relaxed lookup: the fused correction
@pytest.mark.parametrize("mode", ["fused", "serial"])
def test_the_correction_adds_the_next_batchs_lookups_of_updated_rows(mode):
    """Batch n+1's relaxed lookup pools its bags before update n writes the table, so every lookup
    of batch n+1 whose row batch n updates needs that row's change added. ``fused``: update n's
    pass makes those adds, so batch n's ledger counts them; ``serial``: batch n+1's own correction
    pass does. Counted here from the row streams themselves."""
    batches = 4
    r = simulate("cxl", workload="rm1", batches=batches, warmup=0, seed=3, workload_sets=SMALL, trace=False,
                 sets=[("pipeline.correction", mode)])
    streams = r.machine.streams

    def next_lookups_of_updated(n):  # lookups of batch n + 1 whose row batch n touched (and updates)
        return int(np.isin(streams.batch(n + 1).lookup_rows, streams.batch(n).unique_rows).sum())

    wanted = [next_lookups_of_updated(n) for n in range(batches - 1)]
    assert all(w > 0 for w in wanted) and len(set(wanted)) > 1
    got = [r.machine.ledgers[n].logic.corrected_vectors for n in range(batches)]
    if mode == "fused":
        assert got[:-1] == wanted  # update n's pass, sized by batch n+1
    else:
        assert got[1:] == wanted  # batch n+1's own pass

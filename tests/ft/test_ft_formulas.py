"""Closed forms of the failure-tolerance schemes and the TPU/PS step model hold exactly."""

from __future__ import annotations

import math

import pytest

from cxlsim.errors import ConfigError
from cxlsim.ft import formulas as F
from cxlsim.systems.graph import build_devices
from cxlsim.systems.run import load_config
from cxlsim.systems.tpu_ps import partition_bytes, tpu_ps_step

H = 3600.0


def test_full_and_partial_recovery_equations():
    t_total, t_save, t_fail, o_save, o_load, o_res = 56 * H, 2 * H, 28 * H, 60.0, 120.0, 300.0
    assert F.full_overhead_s(t_total, t_save, t_fail, o_save, o_load, o_res) == pytest.approx(
        60 * 28 + (120 + H + 300) * 2)
    assert F.partial_overhead_s(t_total, t_save, t_fail, o_save, o_load, o_res) == pytest.approx(60 * 28 + 420 * 2)
    opt = F.optimal_full_interval_s(o_save, t_fail)
    assert opt == math.sqrt(2 * 60 * 28 * H)
    f = lambda t: F.full_overhead_s(t_total, t, t_fail, o_save, o_load, o_res)  # noqa: E731
    assert f(opt) < f(opt * 0.99) and f(opt) < f(opt * 1.01)


def test_pls_definitions():
    assert F.expected_pls(2 * H, 28 * H, 8) == 0.5 * 2 / (28 * 8)
    assert F.partial_interval_s(0.1, 8, 28 * H) == pytest.approx(2 * 0.1 * 8 * 28 * H, rel=1e-15)
    assert F.expected_pls(F.partial_interval_s(0.1, 8, 28 * H), 28 * H, 8) == pytest.approx(0.1)
    assert F.pls_increment(300, 100, 1000, 4) == 200 / (1000 * 4)
    assert F.pls_increment(300, 100, 1000, 4, failed_shards=2) == 2 * 200 / (1000 * 4)


def test_cpr_decision_falls_back_to_full_when_partial_is_not_cheaper():
    d = F.cpr_decision(56 * H, 28 * H, 10.0, 20.0, 5.0, 300.0, 0.1, 8)
    assert d["recovery"] == "partial" and d["interval_s"] == d["t_save_part_s"] == F.partial_interval_s(0.1, 8, 28 * H)
    # a tiny PLS target forces frequent partial saves that cost more than full recovery's optimum
    d = F.cpr_decision(56 * H, 28 * H, 600.0, 20.0, 5.0, 300.0, 1e-4, 8)
    assert d["recovery"] == "full" and d["interval_s"] == math.sqrt(2 * 600 * 28 * H)


def test_intermittent_rule_is_fc_le_ic():
    assert not F.intermittent_take_full([])
    assert not F.intermittent_take_full([0.26])                 # F=1.26 > I=0.52
    assert not F.intermittent_take_full([0.26, 0.4])            # F=1.66 > I=1.2
    assert not F.intermittent_take_full([0.26, 0.4, 0.5])       # F=2.16 > I=2.0
    assert F.intermittent_take_full([0.26, 0.4, 0.6])           # F=2.26 <= I=2.4
    assert F.intermittent_take_full([0.5, 0.75])                # F=2.25 <= I=2.25 (equality takes full)
    inc = [0.26, 0.4, 0.5]
    assert F.intermittent_take_full(inc) == (1 + sum(inc) <= 4 * 0.5)


def test_bit_width_from_expected_failures():
    assert [F.cnr_bit_width(x) for x in (0.5, 1, 1.5, 3, 4, 20, 21, 100, 500)] == [2, 2, 3, 3, 4, 4, 8, 8, 8]


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_ecrec_memory_and_update_traffic(k):
    assert F.ecrec_memory_factor(k) == (k + 1) / k
    assert F.ecrec_update_traffic_factor(k) == 2.0
    assert F.ecrec_degraded_throughput(5, k) == 4 / (4 + k)


def test_load_imbalance_worked_example():
    tables = [[0.6, 0.3, 0.2, 0.1], [0.6, 0.3, 0.2, 0.1]]
    li = lambda pol: F.load_imbalance(partition_bytes(tables, [0, 0], [64, 64], 4, pol, column_shards=2))  # noqa: E731
    assert li("row") == 2.0
    assert li("table+column") == 1.0
    assert li("column") == 1.0
    assert li("table") == 2.0


def test_rpc_counts():
    assert F.ps_rpc_pairs_per_server(256, 80, coalesced=False) == 256 * 80
    assert F.ps_rpc_pairs_per_server(256, 80, coalesced=True) == 1


WL = {"batch_size": 4096, "tables": 20, "dim": 32, "bottom_mlp": "13-8192-2048-32",
      "top_mlp": "256-64-1", "rows_per_table": 1_000_000}


@pytest.fixture(scope="module")
def dev():
    """The shipped tpu-ps system's device roles (TPUv4 chip, HBM, ICI, parameter server, NICs)."""
    return build_devices(load_config("tpu-ps"))


def test_tpu_ps_step_breakdown_and_pipelining(dev):
    uniq = [30_000] * 20
    serial = tpu_ps_step(WL, {"pipelining": False}, dev, uniq)
    piped = tpu_ps_step(WL, {"pipelining": True, "contention_factor": 1.0}, dev, uniq)
    b = serial["breakdown"]
    assert set(b) == {"b_mlp", "t_mlp", "transfer", "embedding", "checkpoint"}
    compute = serial["step_ns"] - b["checkpoint"]
    assert compute == pytest.approx(b["b_mlp"] + b["t_mlp"] + b["transfer"] + b["embedding"])
    pb = piped["breakdown"]
    assert piped["step_ns"] - pb["checkpoint"] == pytest.approx(
        max(pb["b_mlp"] + pb["t_mlp"], pb["transfer"] + pb["embedding"]))
    # dedup all-to-all: a chip's traffic follows its unique ids; the share it owns stays local
    wide = tpu_ps_step(WL, {}, dev, uniq, chips=128)
    two = tpu_ps_step(WL, {}, dev, uniq, chips=2)
    assert wide["transfer_bytes_per_chip"] == pytest.approx(2 * 20 * 30_000 * (4 + 32 * 4) * 127 / 128)
    assert two["transfer_bytes_per_chip"] == pytest.approx(wide["transfer_bytes_per_chip"] * (1 / 2) / (127 / 128))
    more = tpu_ps_step(WL, {}, dev, [60_000] * 20, chips=128)
    assert more["transfer_bytes_per_chip"] == pytest.approx(2 * wide["transfer_bytes_per_chip"])
    assert piped["transfer_bytes_per_chip"] == 0 and piped["allreduce_ns"] == 0  # one chip: no interconnect


def test_tpu_ps_parameter_servers_coalescing(dev):
    uniq = [30_000] * 20
    per_table = tpu_ps_step(WL, {"placement_policy": "ps"}, dev, uniq, chips=4)
    coalesced = tpu_ps_step(WL, {"placement_policy": "ps", "rpc_coalescing": True}, dev,
                            uniq, chips=4)
    assert dev["tpu"].params.tensorcores_per_chip_count == 2
    assert per_table["rpc_pairs_per_server"] == 4 * 2 * 20 and coalesced["rpc_pairs_per_server"] == 1
    assert coalesced["breakdown"]["embedding"] < per_table["breakdown"]["embedding"]
    with pytest.raises(ConfigError, match="placement_polcy: unknown key"):
        tpu_ps_step(WL, {"placement_polcy": "ps"}, dev, uniq)

"""No silent parameter: every parameter of every role of every shipped system reaches timing or
energy, and an override that reaches neither is refused."""

from __future__ import annotations

import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.config import list_systems
from cxlsim.systems.reach import unread

SMALL = {"batch_size": 16}
CASES = ([(s, ()) for s in list_systems()] + [
    ("tpu-ps", (("topology.gpus_count", 4),)),  # tables in HBM, an interconnect
    ("tpu-ps", (("topology.gpus_count", 2), ("tpu_ps.placement_policy", "ps"), ("tpu_ps.pipelining", False))),
] + [(s, (("platform", "prototype"),)) for s in list_systems() if s != "tpu-ps"])


@pytest.mark.parametrize("system,sets", CASES)
def test_every_parameter_of_every_role_is_read(system, sets):
    """Every parameter of every role (and of the pipeline) of every shipped system is read by the
    run's timing or energy, or declared: descriptive in its schema, or not applicable with a reason."""
    cfg = cxlsim.load_config(system, list(sets))
    # a periodic scheme's parameters are read when its period ends: run one whole period
    period = int((cfg.document.get("pipeline") or {}).get("cnr_interval_batches", 1))
    cxlsim.simulate(cfg, workload="rm1", batches=period, warmup=0, workload_sets=SMALL, trace=False)
    assert unread(cfg) == {}, f"{system}: parameters that reach neither timing nor energy: {unread(cfg)}"


def test_declared_reasons_are_given_to_the_user(capsys):
    rc = main(["run", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--warmup", "0",
               "--set", "workload_overrides.batch_size=16", "--set", "devices.host_cpu.params.lookup_cycles_per_element=1"])
    assert rc == 2
    assert "embeddings run on the near-data logic" in capsys.readouterr().err


def test_the_host_line_fill_buffers_count_lines_not_rows():
    """cache_line_B reaches timing: a 128 B row takes two of the host's line-fill buffers."""
    base = cxlsim.simulate("pmem", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False)
    wide = cxlsim.simulate("pmem", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                           sets=[("devices.host_cpu.params.cache_line_B", 128)])
    assert base.devices["host_cpu"].rows_in_flight(128) == 36 and wide.devices["host_cpu"].rows_in_flight(128) == 72
    # it changes the embedding time (slower here: 72 rows in flight over 4 Optane modules wait in the
    # iMC beyond the 12 each holds and contend, devices/pmem/optane-100.yaml)
    assert wide.breakdown_ms["embedding"] != pytest.approx(base.breakdown_ms["embedding"], rel=1e-3)


def test_a_scratchpad_too_small_for_the_pooled_vectors_is_refused():
    with pytest.raises(InputError, match="scratchpad_KiB"):
        cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                        sets=[("devices.ndp.params.scratchpad_KiB", 1)])


def test_an_unread_override_is_refused(capsys):
    # a descriptive parameter (a fact kept for the record) changes nothing
    rc = main(["run", "--system", "cxl-d", "--workload", "rm1", "--batches", "1", "--warmup", "0",
               "--set", "workload_overrides.batch_size=16", "--set", "devices.ckpt_logic.params.counter_bits=32"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "devices.ckpt_logic.params.counter_bits" in err and err.count("\n") == 1


@pytest.mark.parametrize("key,value,step", [
    ("devices.switch.params.hop_latency_ns", 9999, "pooled"),
    ("devices.fabric_link.params.port_latency_ns", 500, "pooled"),
    ("devices.gpu_link.params.port_latency_ns", 500, "grads"),
    ("devices.host_link.params.port_latency_ns", 500, "config"),
])
def test_fabric_overrides_change_timing(key, value, step):
    """The system's link and switch roles time the steps that cross them (the switch's hop latency
    must change the time)."""
    def span(r):
        rec = r.executor.records[(step, 1)]
        return rec.end_ns - rec.start_ns
    base = cxlsim.simulate("cxl-d", workload="rm3", batches=1, warmup=1, workload_sets=SMALL, trace=False)
    over = cxlsim.simulate("cxl-d", workload="rm3", batches=1, warmup=1, workload_sets=SMALL, trace=False,
                           sets=[(key, value)])
    assert span(over) > span(base)
    if key.startswith("devices.switch"):
        assert over.batch_time_ms["mean"] > base.batch_time_ms["mean"]


@pytest.mark.parametrize("key,value", [("devices.gpu.count", 4), ("devices.ndp.interleave_B", 256),
                                       ("devices.table_memory.levels", 2)])
def test_structural_keys_apply_only_where_a_model_uses_them(key, value):
    with pytest.raises(ConfigError, match=key.split(".", 1)[1]):
        cxlsim.load_config("cxl", [(key, value)])

"""The bulk transfer's closed form (cxlsim.devices.fabric.cxl_bulk) against the CXL memory model's
event simulation (cxlsim.devices.cxl_mem.queueing.FabricSim) driven as a bulk stream: every line
of the transfer issued at once by each of ``sharers`` requesters (host ports) through their own
credits and links, converging on the device's link behind the switch's egress. The far end's
per-line stage is one media channel whose bus time is the stage's interval."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device
from cxlsim.devices.cxl_mem.queueing import (
    LINE_B,
    Fabric,
    FabricSim,
    Request,
    fabric_of,
    idle_read_ns,
)
from cxlsim.devices.fabric.cxl_bulk import bulk_transfer_ns, first_line_ns, one_way_ns
from cxlsim.devices.fabric.cxl_path import FabricPath

LINKS = list_presets("cxl_link")
SWITCHES = list_presets("cxl_switch")
CXL_MEMS = list_presets("cxl_mem")
TOLERANCE = 0.02


def _stages(path: FabricPath, sharers: int, outstanding: int, request_ns: float, far_ns: float,
            complete_ns: float, interval_ns: float, base: Fabric | None = None) -> Fabric:
    """The event model's view of a bulk transfer over ``path`` (one link model, direct or through
    one switch): the requester's times are charged at completion (a pure delay on its loop), the
    far end is its protocol time then one channel of bus ``interval_ns``."""
    lk, n = path.links[0], len(path.links)

    def lone(payload_B: int) -> float:
        return max(0.0, path.transfer_ns(payload_B) - n * lk.per_message_ns(payload_B))

    changes = {"host_protocol_ns": request_ns + complete_ns, "device_protocol_ns": far_ns - interval_ns,
               "media_bus_ns": {"read": interval_ns, "write": interval_ns},
               "media_latency_ns": {(o, p): interval_ns for o in ("read", "write") for p in ("random", "sequential")},
               "media_count": 1, "media_interleave_B": LINE_B, "media_unit_B": LINE_B, "host_credits": outstanding,
               "read_queue": 10**9, "write_queue": 10**9, "host_ports": sharers, "devices": 1,
               "media_model": None}  # the far end a bare per-line stage, not a device's media model
    if base is not None:
        for k, v in changes.items():
            setattr(base, k, v)
        return base
    return Fabric(up_hdr_ns=lk.per_message_ns(0), up_data_ns=lk.per_message_ns(LINE_B), down_hdr_ns=lk.per_message_ns(0),
                  down_data_ns=lk.per_message_ns(LINE_B), link_ns=lk.latency_ns, switched=n > 1,
                  hop_ns=path.switch.hop_latency_ns if n > 1 else 0.0, up_hdr_extra_ns=lone(0),
                  up_data_extra_ns=lone(LINE_B), down_hdr_extra_ns=lone(0), down_data_extra_ns=lone(LINE_B),
                  **changes)


def event_ns(f: Fabric, nbytes: float, direction: str, request_ns: float, acknowledged: bool) -> float:
    """Run the bulk transfer through the event model: the last line's completion at its requester,
    or (an unacknowledged write) the time the far end took it, shifted by the requester's time
    before issue that the model charges at completion."""
    sim = FabricSim(f, "sequential")
    sim.on_done = {}
    taken: list[float] = []
    respond = sim._respond

    def at_far_end(t: float, r: Request) -> None:
        taken.append(t)
        respond(t, r)

    sim._respond = at_far_end
    n, write = math.ceil(nbytes / LINE_B), direction == "write"
    for port in range(f.host_ports):
        for i in range(n):
            sim.issue(0.0, Request(write, (port * n + i) * LINE_B, port, 0.0, "bw"))
    sim.run(n * f.host_ports)
    assert len(sim.done) == n * f.host_ports
    if write and not acknowledged:
        return max(taken) + request_ns
    return max(r.done_ns for r in sim.done)


# sizes over the probes' regimes: a line, exact multiples of a flit's and a credit window's lines and
# one past them, up to 1 MiB (log-uniform so that most draws stay small)
SIZES = st.one_of(st.integers(0, 20).map(lambda e: LINE_B * 2**e), st.integers(0, 20).map(lambda e: LINE_B * 2**e + 1),
                  st.integers(1, 1 << 20))


@st.composite
def _case(draw):
    direction = draw(st.sampled_from(["read", "write"]))
    acknowledged = direction == "read" or draw(st.booleans())
    stages = {"request_ns": draw(st.sampled_from([0.0, 12.0, 110.0, 260.0])),
              "complete_ns": draw(st.sampled_from([0.0, 15.0, 125.0])),
              "interval_ns": draw(st.sampled_from([0.0, 0.02, 1.0, 1.25, 4.0, 9.0]))}
    stages["far_ns"] = stages["interval_ns"] + draw(st.sampled_from([0.0, 15.0, 60.0, 300.0]))
    outstanding = draw(st.sampled_from([1, 4, 17, 64, 256, 512]))
    nbytes = draw(SIZES)
    if draw(st.booleans()):  # a shipped cxl_mem preset's own parts (its path, its event model's builder)
        dev = build_device(draw(st.sampled_from(CXL_MEMS)))
        path = dev.path
        sharers = draw(st.integers(1, 4)) if dev.switch is not None else 1
        f = _stages(path, sharers, outstanding, base=fabric_of(dev), **stages)
    else:  # a link preset, direct or through a switch preset
        link = build_device(draw(st.sampled_from(LINKS)))
        switched = draw(st.booleans())
        path = FabricPath([link] * 2, build_device(draw(st.sampled_from(SWITCHES)))) if switched else FabricPath([link])
        sharers = draw(st.integers(1, 4)) if switched else 1
        f = _stages(path, sharers, outstanding, **stages)
    sharers = min(sharers, max(1, (1 << 15) // max(1, math.ceil(nbytes / LINE_B))))  # bound the simulated lines
    f.host_ports = sharers
    return path, f, nbytes, direction, sharers, outstanding, acknowledged, stages


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_bulk_transfer_within_two_percent_of_the_event_model(case):
    path, f, nbytes, direction, sharers, outstanding, acknowledged, stages = case
    analytic = bulk_transfer_ns(path, nbytes, direction, sharers, outstanding=outstanding, acknowledged=acknowledged,
                                **stages)
    if nbytes == 0:
        assert analytic == 0.0
        return
    simulated = event_ns(f, nbytes, direction, stages["request_ns"], acknowledged)
    assert analytic == pytest.approx(simulated, rel=TOLERANCE)


@pytest.mark.parametrize("name", CXL_MEMS)
def test_one_lone_line_is_the_event_models_idle_read(name):
    """A lone read's fabric part is the queueing model's idle read less its media (the same stages)."""
    dev = build_device(name)
    f = dev.fabric()
    cp = dev.controller.params
    media = f.media_bus_ns["read"] + max(0.0, f.media_latency_ns[("read", "random")] - f.media_bus_ns["read"])
    lone = first_line_ns(dev.path, "read", request_ns=cp["host_protocol_ns"],
                         far_ns=cp["device_protocol_ns"] + media)
    assert lone == pytest.approx(idle_read_ns(f))


def test_credit_waves_and_shared_links_are_what_bind():
    """The form can fail: a credit-bound transfer comes in waves of ``outstanding`` lines, a
    shared egress takes the sharers' lines in turn."""
    link = build_device("cxl_link/cxl2-x16")
    path = FabricPath([link] * 2, build_device("cxl_switch/cxl2-x16"))
    rt = one_way_ns(path, 0) + one_way_ns(path, LINE_B)  # request + response
    # 10 lines, 4 credits: three waves of the round trip
    assert bulk_transfer_ns(path, 10 * LINE_B, "read", outstanding=4) == pytest.approx(
        3 * rt + 1 * link.per_message_ns(LINE_B))
    b = link.per_message_ns(LINE_B)
    one = bulk_transfer_ns(path, 1 << 20, "write", 1, outstanding=10**6)
    two = bulk_transfer_ns(path, 1 << 20, "write", 2, outstanding=10**6)
    assert two - one == pytest.approx((1 << 20) / LINE_B * b)
    with pytest.raises(ValueError):
        bulk_transfer_ns(path, 64, "sideways", outstanding=1)


PROTOCOLS = list_presets("cxl_protocol")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROTOCOLS), st.sampled_from(LINKS), st.booleans(), SIZES.filter(lambda b: b > 0),
       st.sampled_from(["flush", "pull"]))
def test_the_systems_flushes_and_pulls_are_the_event_model(proto, link, switched, nbytes, op):
    """What the systems call for GPU <-> CXL-MEM transfers (a DCOH flush) and the MLP pull (a
    CXL.cache RdCurr from GPU memory at its streaming rate) through the event model's stages: the
    DCOH's (or the device's) pipeline before the message, the home's after, the trackers as
    credits, the per-line stage as the far end's channel."""
    pr, lk = build_device(proto), build_device(link)
    path = FabricPath([lk] * 2, build_device("cxl_switch/cxl3-x16")) if switched else FabricPath([lk])
    p, n = pr.params, math.ceil(nbytes / LINE_B)
    if op == "flush":
        analytic = pr.flush_ns(n, path)
        stages = {"request_ns": p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"] + p["device_protocol_ns"],
                  "far_ns": p["device_protocol_ns"] + p["dcoh_occupancy_ns"], "complete_ns": 0.0,
                  "interval_ns": p["dcoh_occupancy_ns"]}
        direction, acknowledged = "write", False
        analytic_in_sim = analytic + p["dcoh_occupancy_ns"]  # the sim's channel holds the line for its interval
    else:
        interval = LINE_B / (2039 * 0.9)  # an A100's HBM2e at 90 %
        analytic = pr.cache_fill_ns(n, 0.0, path, interval, "RdCurr")
        stages = {"request_ns": p["device_protocol_ns"], "far_ns": pr.cache_fill_home_ns() + max(interval, p["dcoh_occupancy_ns"]),
                  "complete_ns": p["device_completion_ns"], "interval_ns": max(interval, p["dcoh_occupancy_ns"])}
        direction, acknowledged = "read", True
        analytic_in_sim = analytic + max(interval, p["dcoh_occupancy_ns"])
    f = _stages(path, 1, p["max_outstanding_count"], **stages)
    assert analytic_in_sim == pytest.approx(event_ns(f, nbytes, direction, stages["request_ns"], acknowledged),
                                            rel=TOLERANCE)

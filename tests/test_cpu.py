"""Host CPU embedding ops: max of compute, line-fill-buffer latency and bandwidth bounds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device


@pytest.fixture(scope="module")
def cpu():
    return build_device("cpu/i5-9600k")


media = dict(
    n=st.integers(0, 10**7), dim=st.sampled_from([4, 16, 32, 64, 100, 128]),
    lat=st.floats(50, 100_000), bw=st.floats(0.1, 200), threads=st.integers(1, 6),
)


@settings(max_examples=150, deadline=None)
@given(**media)
def test_times_at_least_bounds(cpu, n, dim, lat, bw, threads):
    assert cpu.embedding_lookup_ns(n, dim, lat, bw, threads) >= cpu.lookup_bound_ns(n, dim, lat, bw, threads)
    assert cpu.embedding_update_ns(n, dim, lat, bw, threads) >= cpu.update_bound_ns(n, dim, lat, bw, threads)
    assert cpu.embedding_update_ns(n, dim, lat, bw, threads, medium_write_bw_GBps=bw / 4) >= cpu.update_bound_ns(n, dim, lat, bw, threads, bw / 4)


def test_regimes_follow_the_formula(cpu):
    n, dim = 100_000, 32  # two lines per row
    # latency-bound: SSD-like latency, huge bandwidth -> n * lines * lat / (threads * 12 LFBs)
    assert cpu.embedding_lookup_ns(n, dim, 20_000, 1e6) == pytest.approx(n * 2 * 20_000 / (6 * 12))
    # bandwidth-bound: 64 B lines at 1 GB/s
    assert cpu.embedding_lookup_ns(n, dim, 100, 1.0) == pytest.approx(n * 128 / 1.0)
    # compute-bound: zero latency, infinite bandwidth -> (dim * 0.125 + 20) cycles at 3.7 GHz per thread
    assert cpu.embedding_lookup_ns(n, dim, 0, 1e9) == pytest.approx(n * (32 * 0.125 + 20) / (6 * 3.7))
    # fewer threads: latency-bound time scales inversely
    assert cpu.embedding_lookup_ns(n, dim, 20_000, 1e6, threads=1) == pytest.approx(6 * cpu.embedding_lookup_ns(n, dim, 20_000, 1e6))


def test_update_accumulates_duplicates_and_reads_plus_writes(cpu):
    n, dim = 50_000, 32
    assert cpu.embedding_update_ns(n, dim, 100, 10.0) == pytest.approx(2 * n * 128 / 10.0)
    assert cpu.embedding_update_ns(n, dim, 0, 1e9, n_grads=3 * n) > cpu.embedding_update_ns(n, dim, 0, 1e9)
    with pytest.raises(ValueError):
        cpu.embedding_update_ns(n, dim, 100, 10.0, n_grads=n - 1)


def test_dispatch_energy_and_cli(cpu, capsys):
    assert cpu.dispatch_ns(3) == pytest.approx(30_000)
    assert cpu.energy_J(1e9, 0) == pytest.approx(95) and cpu.energy_J(0, 1e9) == pytest.approx(10)
    assert main(["microbench", "cpu/i5-9600k", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lookup_optane"]["time_ns"] >= out["lookup_optane"]["bound_ns"]
    assert main(["devices", "show", "cpu/i5-9600k"]) == 0

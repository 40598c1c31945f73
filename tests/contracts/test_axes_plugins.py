"""Third-party axis implementations: registered through the ``cxlsim.axes`` entry point of a
distribution on ``sys.path`` (no cxlsim edit), then run as any built-in one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cxlsim.errors import ConfigError
from cxlsim.systems import axes
from cxlsim.systems.run import simulate

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"


@pytest.fixture(scope="module")
def toy_distribution(tmp_path_factory):
    """A distribution ``toy-axes`` whose entry point names ``tests/plugins/toy_axes.py``, found by
    importlib.metadata on ``sys.path`` as an installed one would be."""
    site = tmp_path_factory.mktemp("site")
    info = site / "toy_axes-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-axes\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{axes.ENTRY_POINT_GROUP}]\ntoy = toy_axes\n")
    sys.path[:0] = [str(site), str(PLUGINS)]
    axes.reload_entry_points()
    yield
    sys.path.remove(str(site))
    sys.path.remove(str(PLUGINS))


def test_unknown_implementation_is_refused_with_the_registered_names():
    with pytest.raises(ConfigError, match=r"pipeline.persistence: must be one of .*none.*redo.*undo.*got .nope."):
        simulate("cxl-d", batches=1, warmup=0, sets=[("pipeline.persistence", "nope")])


def test_entry_point_registers_implementations(toy_distribution):
    assert "toy_redo" in axes.names("persistence")
    assert "toy_slow_flush" in axes.names("data_movement")


def test_a_system_runs_with_a_registered_scheme(toy_distribution):
    base = simulate("cxl-d", batches=2, warmup=1, seed=3)
    toy = simulate("cxl-d", batches=2, warmup=1, seed=3, sets=[("pipeline.persistence", "toy_redo")])
    assert type(toy.machine.persistence).__name__ == "ToyRedo"
    assert toy.config.pipeline.persistence == "toy_redo"
    np.testing.assert_array_equal(toy.batch_times_ns, base.batch_times_ns)


def test_a_registered_mover_changes_the_timing(toy_distribution):
    base = simulate("cxl", batches=2, warmup=1, seed=3)
    slow = simulate("cxl", batches=2, warmup=1, seed=3, sets=[("pipeline.data_movement", "toy_slow_flush")])
    pooled = [r.end_ns - r.start_ns for k, r in slow.executor.records.items() if k[0] == "pooled"]
    pooled_base = [r.end_ns - r.start_ns for k, r in base.executor.records.items() if k[0] == "pooled"]
    assert np.allclose(pooled, 2 * np.asarray(pooled_base), equal_nan=True)  # the closing batch: never run

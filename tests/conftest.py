"""Shared fixtures and the test tiers.

Tiers: ``pytest -m "not slow"`` is the fast tier (about a minute on 2 cores, every module); the
full suite (what CI runs) adds the ``slow`` tests. A test is slow if it carries
``@pytest.mark.slow`` or is listed in :data:`SLOW` below: the tests that took a second or more in
a full run on 2 cores (``pytest --durations=80``), kept in one list so that the files of
other packages stay as they are, and those using an expensive module fixture
(:data:`SLOW_FIXTURES`). Every listed file keeps fast tests, so the fast tier still covers every
module.
"""

from __future__ import annotations

import pytest

#: file -> test functions (every parameter; or ``name[param]`` for one) that are slow.
SLOW: dict[str, tuple[str, ...]] = {
    "test_crash_kernels.py": ("test_torn_write_lands_whole_64B_pieces_and_the_journal_reverts_it",),
    "test_device_api.py": ("test_detailed_between_bound_and_stated_factor",),
    "test_dram.py": ("test_microbench_reproduces_sources",),
    "test_ft_sim.py": ("test_cli_runs_every_scenario",),
    "test_kernels_access.py": ("test_access_kernels_match_references",),
    "test_kernels_embedding.py": ("test_kernels_match_references_on_large_tables",
                                  "test_update_matches_reference_bit_for_bit"),
    "test_kernels_ft.py": ("test_error_falls_with_bits_and_adaptive_beats_asymmetric",),
    "test_media.py": ("test_totals_only_equal_per_access_totals", "test_more_modules_never_slower",
                      "test_kernel_equals_reference_across_calls", "test_million_accesses_run",
                      "test_energy_is_computed_from_bytes_once"),
    "test_pmem.py": ("test_durable_at_ack",),
    "test_ssd.py": ("test_sub_page_write_read_modify_writes", "test_paper_latency_165x"),
    "test_sweep_run.py": ("test_executors_give_byte_identical_results[dask]",),
    "test_workload.py": ("test_rm2_full_size_streams_20_batches_under_2GB",),
}
#: Module fixtures that simulate every system × RM (the golden sets) or reproduce the paper.
SLOW_FIXTURES = ("results", "reproduced")


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        names = SLOW.get(item.path.name, ())
        base = item.name.split("[")[0]
        if base in names or item.name in names or any(f in SLOW_FIXTURES for f in getattr(item, "fixturenames", ())):
            item.add_marker(slow)


@pytest.fixture
def user_catalog(tmp_path, monkeypatch):
    """An empty user catalog folder on $CXLSIM_PATH; returns its devices/ folder."""
    root = tmp_path / "catalog"
    (root / "devices").mkdir(parents=True)
    monkeypatch.setenv("CXLSIM_PATH", str(root))
    return root / "devices"

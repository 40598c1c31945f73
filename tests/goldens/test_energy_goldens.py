"""Golden energy regressions: energy per batch by component, every system × RM1–RM4 on the physical
platform (update with `python -m cxlsim.goldens --update`, which rewrites the timing and energy
goldens together and prints every value that moved; `--only energy` for this file alone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cxlsim import goldens

pytestmark = pytest.mark.golden


@pytest.fixture(scope="module")
def results():
    return goldens.compute_all_energy()


def stored() -> dict:
    return json.loads(goldens.default_path(Path(__file__).parent).with_name("energy.json").read_text())


def test_energy_goldens_match(results):
    changes = goldens.diff(stored(), results)
    assert not changes, ("energy changed; review and run `python -m cxlsim.goldens --update`:\n"
                         + "\n".join(changes[:40]))


def test_energy_goldens_cover_every_system_and_rm():
    assert set(stored()) == {f"{goldens.ENERGY_PLATFORM}/{s}/{w}" for s in goldens.cases().systems for w in goldens.cases().workloads}


@pytest.mark.parametrize("case", [f"{goldens.ENERGY_PLATFORM}/{s}/{w}" for w in goldens.cases().workloads
                                  for s in goldens.cases().systems])
def test_components_sum_to_total(results, case):
    r = results[case]
    assert sum(v for k, v in r.items() if k != "total_J") == pytest.approx(r["total_J"], rel=1e-12)
    assert all(v >= 0 for v in r.values())

"""Golden regressions in tests/goldens/: timing (every platform × system × RM1–RM4) and energy per
batch by component (every system × RM1–RM4 on the physical platform), on short runs.

A developer tool for a source checkout (the goldens are part of the test suite, not of the
installed package)::

    python -m cxlsim.goldens                # compare with the stored goldens, print what changed
    python -m cxlsim.goldens --update       # rewrite both after a reviewed change; prints the diff
    python -m cxlsim.goldens --only energy  # one kind (timing or energy), to compare or --update
    python -m cxlsim.goldens --path FILE    # another timing goldens file (--energy-path: energy)

Without a path the files are ``tests/goldens/timing.json`` and ``tests/goldens/energy.json`` of the
cxlsim checkout that contains the current directory (:func:`default_path`; run it from anywhere
inside the clone).

A change in a number is a visible, reviewed change: the update prints every value that moved.
Runs use a reduced batch size (``GOLDEN_BATCH_SIZE``) so the whole set stays fast; the mechanisms
are those of full-size runs. The systems, workloads and timing platforms are those of the catalog's
``configs/sweeps/goldens.yaml`` (:func:`cases`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from cxlsim.api import simulate as simulate_with_energy
from cxlsim.errors import InputError
from cxlsim.studies.paper.settings import dataflow_systems
from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.platform import DEFAULT_PLATFORM
from cxlsim.systems.run import simulate

#: The catalog sweep naming what the goldens pin.
SWEEP = "goldens"
GOLDEN_BATCH_SIZE = 32
GOLDEN_BATCHES = 2
GOLDEN_WARMUP = 1
GOLDEN_SEED = 1
#: Where the goldens live inside a checkout.
RELATIVE_PATH = Path("tests") / "goldens" / "timing.json"
ENERGY_RELATIVE_PATH = RELATIVE_PATH.with_name("energy.json")
#: The platform of the energy goldens: every system on the same real devices
#: (docs/design.md#platforms).
ENERGY_PLATFORM = "physical"
KINDS = ("timing", "energy")
REL_TOL = 1e-9


def cases() -> SweepLists:
    """What the goldens pin, in :data:`SWEEP`'s order: its op-graph systems, its workloads and the
    platforms of the timing goldens."""
    lists = sweep_lists(SWEEP, needs=("systems", "workloads", "platforms"))
    return replace(lists, systems=dataflow_systems(SWEEP))


def default_path(start: str | Path | None = None) -> Path:
    """``tests/goldens/timing.json`` of the cxlsim checkout containing ``start`` (default: the
    current directory): the nearest folder at or above it holding ``pyproject.toml`` and
    ``tests/goldens/``. Raises :class:`~cxlsim.errors.InputError` outside a checkout."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / RELATIVE_PATH.parent).is_dir():
            return folder / RELATIVE_PATH
    raise InputError(f"goldens: {here} is not inside a cxlsim checkout (no tests/goldens/ above it); "
                     "run from the clone or give --path FILE")


def compute(system: str, workload: str, platform: str = DEFAULT_PLATFORM) -> dict[str, float]:
    r = simulate(system, workload=workload, batches=GOLDEN_BATCHES, warmup=GOLDEN_WARMUP, seed=GOLDEN_SEED,
                 workload_sets={"batch_size": GOLDEN_BATCH_SIZE}, sets=[("platform", platform)], trace=False)
    out = {"batch_time_ms": r.batch_time_ms["mean"], "raw_stall_ms": float(r.raw_stall_ns.mean() / 1e6)}
    out.update({f"breakdown.{k}": v for k, v in r.breakdown_ms.items()})
    return out


def compute_all() -> dict[str, dict[str, float]]:
    """Every case, keyed ``platform/system/workload``."""
    c = cases()
    return {f"{p}/{s}/{w}": compute(s, w, p) for p in c.platforms for w in c.workloads for s in c.systems}


def compute_energy(system: str, workload: str, platform: str = ENERGY_PLATFORM) -> dict[str, float]:
    """Energy per measured batch (J): ``total_J`` and ``<component>_J`` for every component."""
    r = simulate_with_energy(system, workload=workload, batches=GOLDEN_BATCHES, warmup=GOLDEN_WARMUP,
                             seed=GOLDEN_SEED, workload_sets={"batch_size": GOLDEN_BATCH_SIZE},
                             sets=[("platform", platform)], trace=False)
    out = {"total_J": r.energy["total"]}
    out.update({f"{k}_J": v for k, v in r.energy["by_component"].items()})
    return out


def compute_all_energy() -> dict[str, dict[str, float]]:
    """Every energy case, keyed ``platform/system/workload``."""
    c = cases()
    return {f"{ENERGY_PLATFORM}/{s}/{w}": compute_energy(s, w) for w in c.workloads for s in c.systems}


COMPUTE = {"timing": compute_all, "energy": compute_all_energy}


def diff(old: dict, new: dict) -> list[str]:
    lines = []
    for case in sorted(set(old) | set(new)):
        a, b = old.get(case, {}), new.get(case, {})
        for key in sorted(set(a) | set(b)):
            va, vb = a.get(key), b.get(key)
            if va is None or vb is None or abs(va - vb) > REL_TOL * max(abs(va), abs(vb), 1e-12):
                lines.append(f"{case} {key}: {va} -> {vb}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.goldens", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="rewrite the stored goldens")
    ap.add_argument("--only", choices=KINDS, help="one kind of goldens (default: both)")
    ap.add_argument("--path", metavar="FILE", help="timing goldens file (default: tests/goldens/timing.json of "
                    "the checkout containing the current directory)")
    ap.add_argument("--energy-path", metavar="FILE", help="energy goldens file (default: tests/goldens/energy.json)")
    args = ap.parse_args(argv)
    try:
        paths = {"timing": Path(args.path) if args.path else default_path(),
                 "energy": Path(args.energy_path) if args.energy_path else default_path().with_name(ENERGY_RELATIVE_PATH.name)}
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 2
    differ = 0
    for kind in ([args.only] if args.only else KINDS):
        path = paths[kind]
        try:
            new = COMPUTE[kind]()
        except InputError as exc:
            print(exc, file=sys.stderr)
            return 2
        old = json.loads(path.read_text()) if path.exists() else {}
        changes = diff(old, new)
        for line in changes:
            print(f"{kind}: {line}")
        if args.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
            print(f"wrote {path} ({len(changes)} values changed)")
            continue
        print(f"{kind} goldens match" if not changes else f"{kind}: {len(changes)} values differ; review, then run "
              "with --update")
        differ += bool(changes)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

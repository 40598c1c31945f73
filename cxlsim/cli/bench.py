"""Speed and memory benchmarks; each prints ratios against a baseline measured in the same run.

  cxlsim bench kernels     numba kernels vs numpy reference (and PyTorch when importable)
  cxlsim bench sim         simulated batches per second; the full comparison's wall time
  cxlsim bench sweep       sweep points per second per executor
  cxlsim bench crashtest   crash points per second
  cxlsim bench stats       a run with --stats against the same run without
(targets appear as their modules land in cxlsim/bench/)
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

from cxlsim.cli._args import whole, whole_or_auto
from cxlsim.cli._platform import check_platform_name
from cxlsim.errors import InputError
from cxlsim.reports.output import emit

HELP = "speed/memory benchmarks (kernels, sim, sweep, crashtest, stats) as ratios measured in one run"


def _names() -> list[str]:
    """The targets' names, without importing them (a target may be costly to import: the parser of
    every command is built, so listing them must not)."""
    import cxlsim.bench as pkg

    return sorted(info.name for info in pkgutil.iter_modules(pkg.__path__) if not info.name.startswith("_"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    names = _names()
    p.add_argument("target", help="what to benchmark: " + ", ".join(names) if names else "target")
    p.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    p.add_argument("--workers", type=whole(1, 1024), default=None,
                   help="sim: processes for the comparison (default: CPU count; 1 = serial only)")
    p.add_argument("--platform", nargs="+", metavar="NAME", dest="platforms",
                   help="sim: platforms to time (default: those of configs/sweeps/bench-sim.yaml)")
    p.add_argument("--batches", type=whole_or_auto(1), metavar="N|auto",
                   help="sim: measured batches per run (default auto at 1%%, --quick 2; 20 times the fixed "
                        "comparison auto replaced)")


def run(args: argparse.Namespace) -> int:
    names = _names()
    if args.target not in names:
        raise InputError(f"bench: unknown target {args.target!r}; choose from {', '.join(names) or 'none'}")
    mod = importlib.import_module(f"cxlsim.bench.{args.target}")
    if getattr(args, "platforms", None) and args.target != "sim":
        raise InputError(f"bench {args.target}: --platform applies to bench sim only")
    for name in getattr(args, "platforms", None) or ():
        check_platform_name(name)
    if getattr(args, "batches", None) is not None and args.target != "sim":
        raise InputError(f"bench {args.target}: --batches applies to bench sim only")
    result = mod.run(args)
    emit(args, result, mod.render)
    return 0

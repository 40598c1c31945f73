"""The ``cxlsim`` command line.

Each module of :mod:`cxlsim.cli` whose name does not start with ``_`` is a subcommand: it defines
``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``. Every subcommand gets
``--config FILE``, ``--set KEY=VALUE`` (repeatable) and ``--json``.

Exit status: 0 ok; 2 bad input (one line naming the file and key); 1 internal error (an output
that cannot be written, e.g. a full disk, is one line naming the file, not a traceback). A value
inside its bounds but outside its plausible range is run, with one ``warning: ...`` line on stderr.

Subcommand modules import the simulator inside ``run`` (and the few names their ``--help`` needs
inside ``add_arguments``): building the parser imports every subcommand, and ``cxlsim --help`` must
not load numba, matplotlib or the whole model. The command line is the top layer, so these imports
dodge no cycle; elsewhere imports sit at module level.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings
from types import ModuleType

from cxlsim.config.params import PlausibilityWarning
from cxlsim.errors import InputError

EPILOG = """exit status: 0 ok, 2 bad input (one line naming the file and key), 1 internal error.
Units are in key names (read_latency_ns, bw_GBps); inside, time is ns and data bytes."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's usage errors are bad input too: exit 2, one line
        print(f"{self.prog}: error: {message} (usage: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _commands() -> dict[str, ModuleType]:
    import cxlsim.cli as pkg

    mods = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"cxlsim.cli.{info.name}")
        if hasattr(mod, "run") and hasattr(mod, "add_arguments"):
            mods[getattr(mod, "NAME", info.name)] = mod
    return mods


def build_parser() -> argparse.ArgumentParser:
    from cxlsim.version import __version__

    parser = _Parser(
        prog="cxlsim",
        description="cxlsim: a cycle-approximate model of failure-tolerant recommendation-model "
        "training on persistent memory disaggregated over CXL.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cxlsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in _commands().items():
        p = sub.add_parser(
            name,
            help=mod.HELP,
            description=(mod.__doc__ or mod.HELP).strip(),
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        common = p.add_argument_group("common options")
        common.add_argument("--config", metavar="FILE", help="YAML configuration file")
        common.add_argument(
            "--set", metavar="KEY=VALUE", action="append", default=[],
            help="override a configuration key (dotted path; repeatable), e.g. --set read_latency_random_ns=400",
        )
        common.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2, one line printed)
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            _print_plausibility_warnings()
            return int(args._run(args) or 0)
    except InputError as exc:
        print(f"cxlsim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # an unwritable or full output file or folder: internal I/O error, one line
        print(f"cxlsim {args.command}: internal error: {io_message(exc)}", file=sys.stderr)
        return 1


def _print_plausibility_warnings() -> None:
    """Within the caller's ``warnings.catch_warnings()``: each distinct value outside its plausible
    range (:class:`~cxlsim.config.params.PlausibilityWarning`) is one ``warning: ...`` line on
    stderr, however often the value is checked; other warnings print as Python prints them."""
    shown: set[str] = set()
    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202
        if not issubclass(category, PlausibilityWarning):
            return default(message, category, filename, lineno, file, line)
        if str(message) not in shown:
            shown.add(str(message))
            print(f"warning: {message}", file=sys.stderr)
        return None

    warnings.simplefilter("always", PlausibilityWarning)
    warnings.showwarning = show


def io_message(exc: OSError) -> str:
    """One line for an I/O failure: the file and the reason."""
    name = f"{exc.filename}: " if exc.filename else ""
    return f"{name}{exc.strerror or exc}"


if __name__ == "__main__":
    raise SystemExit(main())

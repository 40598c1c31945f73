"""The ``--platform`` option of the commands that run systems (SPEC §11)."""

from __future__ import annotations

import argparse
from typing import Any

from cxlsim.config.yamlio import parse_set


def add_platform_option(p: argparse.ArgumentParser, what: str = "the run") -> None:
    p.add_argument("--platform", metavar="NAME",
                   help=f"the apparatus of {what}: which device fills each role (configs/platforms/: "
                        "physical — the default, every system on the same real devices —, prototype — "
                        "the machine the paper measured —, table2); same as --set platform=NAME")


def sets_of(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``--set`` overrides, then ``--platform`` (which wins)."""
    sets = parse_set(getattr(args, "set", None))
    if getattr(args, "platform", None):
        sets.append(("platform", args.platform))
    return sets

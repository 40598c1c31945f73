"""The ``--platform`` option of the commands that run systems (docs/design.md#platforms)."""

from __future__ import annotations

import argparse
from typing import Any

from cxlsim.config.yamlio import parse_set
from cxlsim.errors import ConfigError
from cxlsim.systems.platform import load_platform


def add_platform_option(p: argparse.ArgumentParser, what: str = "the run") -> None:
    p.add_argument("--platform", metavar="NAME",
                   help=f"the apparatus of {what}: which device fills each role (configs/platforms/: "
                        "physical — the default, every system on the same real devices —, prototype — "
                        "the machine the paper measured —, table2); same as --set platform=NAME")


def sets_of(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``--set`` overrides, then ``--platform`` (which wins; checked here, so that a bad name is
    blamed on ``--platform``, and an empty one is refused rather than read as no platform)."""
    sets = parse_set(getattr(args, "set", None))
    if getattr(args, "platform", None) is not None:
        check_platform_name(args.platform)
        sets.append(("platform", args.platform))
    return sets


def check_platform_name(name: str, option: str = "--platform") -> None:
    """Refuse a platform ``option`` names that does not exist (or is empty), naming ``option``; an
    error inside an existing platform file names that file."""
    try:
        load_platform(name)
    except ConfigError as exc:
        if exc.where != "--platform":
            raise
        raise ConfigError(option, "", exc.message) from None

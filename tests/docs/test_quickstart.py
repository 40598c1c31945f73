"""docs/quickstart.md runs as written: every command of its fenced ``console`` blocks (lines after
``$ ``) and ``bash`` blocks (every line that is not a comment) is run here, in a scratch folder.

To keep the tier fast each command gets the documented small-size options its command takes: a
tiny workload (``--set workload_overrides.*``), one measured batch (``--batches 1``, or ``--set
batches=1`` for a sweep), the serial executor without a progress bar, and for ``reproduce`` RM1 on
pmem and cxl on the prototype platform unless the command names its own systems and workloads.
The install line is not run here: it must be the README's, which ``.ci/run`` runs.

A block preceded by ``<!-- quickstart-test: needs "cxlsim SUBCOMMAND --option" -->`` is skipped
while ``cxlsim SUBCOMMAND --help`` lacks that option (a feature documented ahead of its landing);
it runs, and must pass, from the moment the option exists.

Where the page shows a command's output, the header (the first line, up to its first colon) must
be what the command prints."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from cxlsim.cli import build_parser
from cxlsim.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "quickstart.md"
BLOCK = re.compile(r'(?:<!--\s*quickstart-test:\s*needs\s+"([^"]+)"\s*-->\s*\n)?```(console|bash)\n(.*?)```', re.S)
INSTALL = "python3 -m pip install"

#: A tiny workload: 4 tables of 10,000 rows, 8 lookups, batches of 16.
TINY = {"workload_overrides.batch_size": 16, "workload_overrides.rows_per_table": 10000,
        "workload_overrides.tables": 4, "workload_overrides.lookups_per_table": 8}
SETS = [a for k, v in TINY.items() for a in ("--set", f"{k}={v}")]


@dataclass(frozen=True)
class Command:
    line: str
    needs: str | None  # "cxlsim SUB --option" the block needs, or None
    output: tuple[str, ...]  # the output the page shows under it


def commands(text: str) -> list[Command]:
    """The page's commands in order, with the block's need and the output shown under each."""
    out: list[Command] = []
    for needs, kind, body in BLOCK.findall(text):
        found: list[tuple[str, list[str]]] = []
        for raw in body.splitlines():
            if kind == "bash":
                if raw.strip() and not raw.lstrip().startswith("#"):
                    found.append((raw.strip(), []))
            elif raw.startswith("$ "):
                found.append((raw[2:].strip(), []))
            elif found:
                found[-1][1].append(raw)
        out += [Command(line, needs or None, tuple(shown)) for line, shown in found]
    return out


COMMANDS = commands(DOC.read_text(encoding="utf-8"))
RUN = [c for c in COMMANDS if not c.line.startswith(INSTALL)]


def test_the_page_has_what_it_promises():
    """Install, the first run, the paper's figures, a what-if, a sweep, a timeline, the statistics."""
    subs = [shlex.split(c.line)[1] for c in RUN if len(shlex.split(c.line)) > 1]
    assert {"run", "reproduce", "sweep", "timeline", "energy"} <= set(subs)
    assert any("--set" in c.line for c in RUN)  # the what-if
    assert any(c.needs for c in COMMANDS)  # the statistics, ahead of --stats
    assert all(c.line.startswith(("cxlsim ", INSTALL)) for c in COMMANDS)


def test_the_install_line_is_the_readmes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [c.line for c in COMMANDS if c.line.startswith(INSTALL)]
    assert lines and all(any(r.strip().startswith(line) for r in readme.splitlines()) for line in lines)


def supported(needs: str) -> bool:
    """``cxlsim SUB --option``: SUB's parser has the option."""
    _, sub, option = needs.split()
    action = next(a for a in build_parser()._actions if a.dest == "command")
    parser = action.choices.get(sub)
    return parser is not None and any(option in a.option_strings for a in parser._actions)


def test_a_needed_option_is_detected():
    assert supported("cxlsim run --batches") and not supported("cxlsim run --no-such-option")


def small(argv: list[str]) -> list[str]:
    """``argv`` with the small-size options of the module docstring."""
    sub = argv[0] if argv else ""
    if sub in ("run", "energy", "timeline"):
        return argv + ([] if "--batches" in argv else ["--batches", "1"]) + SETS
    if sub == "reproduce":
        extra = [] if "--systems" in argv else ["--systems", "pmem", "cxl"]
        extra += [] if "--workloads" in argv else ["--workloads", "rm1"]
        extra += [] if "--platform" in argv else ["--platform", "prototype"]
        return argv + extra + ["--batches", "1", "--executor", "serial", "--no-progress",
                               "--set", "warmup_batches=0", *SETS]
    if sub == "sweep":
        return argv + ["--executor", "serial", "--no-progress", "--set", "batches=1", "--set", "warmup_batches=0",
                       *SETS]
    return argv


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One folder for the whole page, as a reader's shell has one: a later command reads what an
    earlier one wrote (``stats diff a.yaml b.yaml``); the commands run in the page's order."""
    return tmp_path_factory.mktemp("quickstart")


#: subcommands whose small run still takes seconds (docs/testing.md: slow from a second up)
SLOW = ("reproduce", "sweep")


@pytest.mark.parametrize("cmd", [pytest.param(c, id=c.line, marks=[pytest.mark.slow] if c.line.split()[1:2] and
                                              c.line.split()[1] in SLOW else []) for c in RUN])
def test_the_command_runs(cmd, scratch, monkeypatch, capsys):
    if cmd.needs and not supported(cmd.needs):
        pytest.skip(f"{cmd.needs.split()[-1]} not yet in `{' '.join(cmd.needs.split()[:2])} --help`")
    argv = shlex.split(cmd.line)
    assert argv[0] == "cxlsim"
    argv = [str(ROOT / a) if (ROOT / a).is_file() and not Path(a).is_absolute() else a for a in argv[1:]]
    monkeypatch.chdir(scratch)  # outputs (plots/, a.yaml...) go to the page's scratch folder
    rc = cli_main(small(argv))
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.out.strip()
    if cmd.output:
        shown = cmd.output[0].split(":")[0]
        assert captured.out.splitlines()[0].split(":")[0] == shown

"""What a fuzzing round of the command line and the config readers found: each cause exits 2 with
one line naming the file or option and the key, never a traceback, a hang or a silent run. Causes
that are generic are generated (every study command × every bad-argument kind, every platform-file
key path)."""

from __future__ import annotations

import pytest

from cxlsim.config.bounds import MAX_OUTSTANDING_REQUESTS
from tests.contracts.test_hardening import one_line_exit_2


@pytest.mark.parametrize("threads", [MAX_OUTSTANDING_REQUESTS // 12 + 1, 10**5, 10**8])
def test_microbench_threads_are_bounded(capsys, threads):
    one_line_exit_2(capsys, ["microbench", "pmem/optane-100", "--threads", str(threads)], "--threads", "5,461")


def test_microbench_threads_at_the_bound_parse():
    from cxlsim.cli import build_parser

    args = build_parser().parse_args(["microbench", "pmem/optane-100", "--threads", str(MAX_OUTSTANDING_REQUESTS // 12)])
    assert args.threads * 12 <= MAX_OUTSTANDING_REQUESTS


#: Each study command's options by the kind of value they take.
STUDY_OPTIONS: dict[str, dict[str, str]] = {
    "fig12": {"--platform": "platform", "--workload": "workload"},
    "sampling": {"--systems": "system", "--workloads": "workload", "--platforms": "platform", "--workers": "count"},
    "sensitivity": {"--workloads": "workload", "--batches": "count"},
    "symmetry": {"--system": "system", "--workloads": "workload", "--points": "point", "--batches": "count",
                 "--warmup": "count0"},
    "platform_study": {"--workloads": "workload", "--batches": "count"},
    "readings": {"--workloads": "workload", "--batches": "count"},
}
#: Bad values of each kind: a typo, an empty name, out of range, not a number, malformed.
BAD_VALUES: dict[str, tuple[str, ...]] = {
    "platform": ("prototyp", ""), "workload": ("rm9", ""), "system": ("sdd", ""),
    "count": ("0", "-1", "x"), "count0": ("-1", "x"), "point": ("2y2", "0x4", "x", ""),
}
STUDY_CASES = [(study, option, value) for study, options in STUDY_OPTIONS.items()
               for option, kind in options.items() for value in BAD_VALUES[kind]]


@pytest.mark.parametrize("study, option, value", STUDY_CASES)
def test_study_commands_refuse_bad_arguments_in_one_line(capsys, study, option, value):
    """Bad input to a study's command exits 2 with one line naming the option, before anything runs."""
    import importlib

    main = importlib.import_module(f"cxlsim.studies.{study}.__main__").main
    try:
        rc = main([option, value])
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert option in lines[0], lines[0]

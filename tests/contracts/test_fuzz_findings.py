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


def _error_classes() -> list[type]:
    """Every :class:`~cxlsim.errors.CxlsimError` class of the modules that define one."""
    import importlib
    import pkgutil

    import cxlsim
    from cxlsim.errors import CxlsimError

    for info in pkgutil.walk_packages(cxlsim.__path__, "cxlsim."):
        if info.name.startswith(("cxlsim.systems", "cxlsim.errors", "cxlsim.ft", "cxlsim.config")):
            importlib.import_module(info.name)
    seen, todo = [], [CxlsimError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_cxlsim_errors_pickle_with_their_fields(cls):
    import pickle

    from cxlsim.errors import ConfigError

    args = ("configs/cxl.yaml", "groups[1].systems[0]", "no such system 'sdd'\n") if issubclass(cls, ConfigError) \
        else ("--workers: must be >= 1",)
    error = cls(*args)
    error.note_of_the_raiser = 7
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and str(again) == str(error) and again.args == error.args
    assert vars(again) == vars(error)


def test_a_config_error_in_a_study_worker_reaches_the_parent():
    """A system typo in a sampling worker is raised in the parent (it used to leave the pool waiting
    for a result it could not read)."""
    import multiprocessing as mp

    from cxlsim.errors import ConfigError
    from cxlsim.studies.sampling.simulation import check_one

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("the study forks its workers")
    with mp.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(check_one, (("sdd", "rm1", "physical", 0.01, None),))
        with pytest.raises(ConfigError, match="sdd") as caught:
            pending.get(timeout=60)
    assert caught.value.where == "sdd" and "no such system" in caught.value.message

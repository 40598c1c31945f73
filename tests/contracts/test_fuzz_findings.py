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

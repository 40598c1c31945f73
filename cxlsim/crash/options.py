"""Names and defaults of the crash checker's options (light: the command line imports it).

Default scale: see :mod:`cxlsim.crash.scale` (why 1e-3) and docs/crash.md.
"""

from __future__ import annotations

DEFAULT_SCALE = 1e-3
DEFAULT_BATCHES = 6
#: With a relaxed MLP log (``cxl``), the default runs enough batches for one MLP log to complete,
#: plus ``MLP_LOG_MARGIN_BATCHES`` after it (crashes after its flag then recover from it), at most
#: ``MAX_DEFAULT_BATCHES`` (the fault-free reference keeps every batch's state).
MLP_LOG_MARGIN_BATCHES = 3
MAX_DEFAULT_BATCHES = 40
DEFAULT_POINTS = 1000
DEFAULT_RESUME = 2

#: Injected protocol bugs (``--inject-bug``): each breaks one rule, so the checker must find violations.
BUGS = {
    "flag-before-data": "flags written at the start of their step, before the data they cover",
    "delete-old-log-early": "the previous log is deleted when the new one starts, before it is durable",
    "local-persistence": "several CXL-MEMs: each trusts its own flags (deletes its old logs once they are "
                         "set; relaxed: flags its MLP log after its own embedding log) and recovery takes the "
                         "persistent batch from CXL-MEM 0's flags alone",
    "delete-on-embedding-flag": "the old checkpoint is deleted once the new embedding log is flagged, without "
                                "waiting for the MLP log's flag",
}

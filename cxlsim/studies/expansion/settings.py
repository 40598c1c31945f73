"""The experiment's apparatus (Sun et al., MICRO'23, artifact ``fig9a/``) and the readings it
leaves open (module docstring of :mod:`cxlsim.studies.expansion`)."""

from __future__ import annotations

PLATFORM = "spr-cxl"
#: the system whose object graph the study builds its devices from (host engine, tiered tables)
SYSTEM = "cxl-expander"
#: threads 4, 8, ..., 32 (thread i pinned to core i)
THREADS = tuple(range(4, 33, 4))
#: DDR:CXL page weights (Linux's weighted interleave)
RATIOS = ((100, 0), (83, 17), (62, 38), (50, 50), (37, 63), (17, 83), (0, 100))
#: fp32 elements a row (256 B)
DIM = 64
ROW_B = DIM * 4
#: rows of the table: ≈ 3.5 × 10⁵ (≈ 90 MB, the artifact's upper-bound estimate from MERCI's partitions)
TABLE_ROWS = 350_000
#: queries a pass (the Amazon "Office Products" review data)
QUERIES_PER_PASS = 744_841
#: queries simulated a point: the pass is stationary, so its time is the sample's scaled by the
#: queries (named modelling resolution; the sensitivity of the prediction to it is in the docs)
SAMPLE_QUERIES = 6_000
#: reading: mean query length (rows a query sums), not stated by the paper: swept
QUERY_LENGTHS = (10, 20, 40)
DEFAULT_QUERY_LENGTH = 20
#: reading: cache lines a 256 B row spans (5: the array is most likely not line aligned)
LINES_PER_ROW = 5
#: reading: the last-level cache a run's lines may occupy: the SNC node's quarter of the socket's
#: 60 MB, for the DRAM node's and the CXL node's lines alike
LLC_SHARE = 0.25
#: page size of the interleave (Linux base page)
PAGE_B = 4096
SEED = 1

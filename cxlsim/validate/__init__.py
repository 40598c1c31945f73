"""Validation tools (above the models): device checks against published measurements
(:mod:`.checks`), the media microbenchmark (:mod:`.media_bench`) and the CXL memory probes (:mod:`.cxl_mlc`)."""

"""The embedding-reduction experiment of Sun et al. (MICRO'23, "Demystifying CXL Memory with
Genuine CXL-Ready Systems and Devices", Fig. 9(a)), predicted on the ``spr-cxl`` platform.

MERCI's baseline kernel: one fp32 table of 64-wide rows (256 B), queries that sum their rows into a
64-wide result, the results a second array; both arrays' pages interleaved over one SNC node's DDR5
(2 channels) and the CXL-A expander at DDR:CXL = 100:0 … 0:100 (Linux's weighted interleave);
4 … 32 threads, queries split evenly; throughput = queries ÷ pass time. Every device is the
platform's, built through the ``cxl-expander`` system's object graph: the Xeon's cores and fill
buffers, the DDR5 channels' media model, the expander's media behind its crossing (link servers,
device queues, protocol times).

The measured result is held out: this predicts it from the apparatus alone. The readings the
apparatus leaves open are options, each default argued in ``docs/validation.md`` ("The
embedding-reduction experiment"): the mean query length (swept), the cache lines a row spans (4, or
5 when the array is not line aligned), the SNC node the DDR-only runs bind to (its two local
channels), which LLC slices hold a CXL node's lines (a node's quarter of the LLC), and the queries'
row popularity (uniform: the review data's popularity is not stated).

    python -m cxlsim.studies.expansion [--json] [--plot F.png] [--query-lengths 10 20 40]
"""

"""The study's JSON document, table and plot (:mod:`cxlsim.studies.expansion`)."""

from __future__ import annotations

from typing import Any

from cxlsim.studies.expansion import settings as S
from cxlsim.studies.expansion.simulation import Point


def ratio_key(ratio: tuple[int, int]) -> str:
    return f"{ratio[0]}:{ratio[1]}"


def document(points: list[Point], query_length: int) -> dict[str, Any]:
    """The ``--json`` document: ``platform``, ``threads``, ``ratios``, ``throughput_qps`` (``{ratio:
    [one value a thread count]}`` at ``query_length``), ``query_length``; every swept length under
    ``by_query_length``; the readings taken."""
    threads = sorted({p.threads for p in points})
    ratios = list(dict.fromkeys(ratio_key(p.ratio) for p in points))
    by_length: dict[str, dict[str, list[float]]] = {}
    for p in points:
        row = by_length.setdefault(str(p.query_length), {}).setdefault(ratio_key(p.ratio), [0.0] * len(threads))
        row[threads.index(p.threads)] = p.throughput_qps
    return {
        "platform": S.PLATFORM,
        "threads": threads,
        "ratios": ratios,
        "throughput_qps": by_length[str(query_length)],
        "query_length": query_length,
        "by_query_length": by_length,
        "bound": {ratio_key(p.ratio): p.bound for p in points if p.query_length == query_length and p.threads == threads[-1]},
        "readings": {
            "query_length": f"mean rows a query sums, not stated: swept {list(S.QUERY_LENGTHS)}, {query_length} reported",
            "lines_per_row": f"{S.LINES_PER_ROW} (a 256 B row off line alignment spans five lines)",
            "ddr_node": "one SNC node of the expander's socket, its 2 local DDR5-4800 channels",
            "llc": f"{S.LLC_SHARE:g} of the socket's LLC for the run's lines, the DRAM node's and the CXL node's alike",
            "popularity": "rows drawn uniformly (the review data's popularity is not stated)",
            "sample_queries": S.SAMPLE_QUERIES,
        },
    }


def table(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["DDR:CXL"] + [f"{t} thr" for t in doc["threads"]]
    rows = [[r] + [f"{v / 1e6:.2f}" for v in doc["throughput_qps"][r]] for r in doc["ratios"]]
    return head, rows


def plot(doc: dict[str, Any], path: str) -> None:
    """Throughput against threads, one line per DDR:CXL ratio (the paper's Fig. 9(a) axes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for r in doc["ratios"]:
        ax.plot(doc["threads"], [v / 1e6 for v in doc["throughput_qps"][r]], marker="o", label=r)
    ax.set_xlabel("threads")
    ax.set_ylabel("throughput (M queries/s)")
    ax.set_title(f"embedding reduction on {doc['platform']} (predicted, mean query length {doc['query_length']})")
    ax.set_xticks(doc["threads"])
    ax.grid(alpha=0.3)
    ax.legend(title="DDR:CXL", ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

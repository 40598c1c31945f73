"""What the Figure 12 points cover: the catalog sweep (systems, workload, platforms), the steps
reported and the paper's values."""

from __future__ import annotations

from cxlsim.sweep.lists import SweepLists, sweep_lists

#: The catalog sweep naming the runs' systems, workload and platforms.
STUDY = "fig12"
#: Steps reported, in the order of a batch (those a system does not run are left out).
STEPS = ("b_fwd", "lookup", "correction", "pooled", "t_mlp", "grads", "b_bwd", "mlp_opt", "update", "emb_log", "mlp_log",
         "redo_mlp", "redo")
#: The paper's Figure 12 points (docs/design.md#calibration), ms from the batch's start.
PAPER = {
    "cxl-d": {"b_fwd": (0.0, 0.6), "t_mlp": (0.6, 2.2), "update": (None, 4.9), "batch": 6.7},
    "cxl-b": {"b_fwd": (0.0, 0.6), "exposed_logging_ms": 0.3},
    "cxl": {"lookup": (1.0, 1.4), "mlp_log": (1.4, 2.2)},
}


def study_lists() -> SweepLists:
    """The systems, workloads and platforms of :data:`STUDY` (each list needed)."""
    return sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))


#: Figure 12 durations (ms) and the model quantity each is compared with: (system, what, paper ms,
#: how to read the model's value from a run's intervals). ``update`` is from the end of the GPU's
#: interaction/top-MLP window (2.2) to the update's end (4.9); ``redo`` from the update's end to the
#: next batch (4.9–6.7).
IMPLIED = (
    ("cxl-d", "lookup (0–0.6)", 0.6, lambda p: p["lookup"][1] - p["lookup"][0]),
    ("cxl-d", "interaction + top MLP (0.6–2.2)", 1.6, lambda p: p["t_mlp"][1] - p["t_mlp"][0]),
    ("cxl-d", "update (2.2–4.9)", 2.7, lambda p: p["update"][1] - p["t_mlp"][1]),
    ("cxl-d", "redo record (4.9–6.7)", 1.8, lambda p: p["batch_ms"] - p["update"][1]),
    ("cxl-d", "batch (6.7)", 6.7, lambda p: p["batch_ms"]),
    ("cxl-b", "batch (6.7 − 1.6)", 5.1, lambda p: p["batch_ms"]),
    ("cxl", "relaxed lookup (1.0–1.4)", 0.4, lambda p: p["lookup"][1] - p["lookup"][0]),
)

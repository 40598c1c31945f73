"""The sampling check's table (``docs/validation.md``)."""

from __future__ import annotations

from typing import Any


def markdown(doc: dict[str, Any]) -> str:
    """The docs/validation.md table."""
    yes = {True: "yes", False: "**no**"}
    lines = ["| platform | system | RM | auto batches (+warm-up) | auto mean ± 95 % (ms) | 20-batch mean ± 95 % (ms) "
             "| difference | in 20-batch CI | 20-batch mean in auto CI | within target | batch simulations auto / 20 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["cells"]:
        lines.append(f"| {c['platform']} | {c['system']} | {c['workload']} | {c['batches']} (+{c['warmup_batches']}) "
                     f"| {c['auto_mean_ms']:.4g} ± {c['auto_ci95_ms']:.2g} | {c['reference_mean_ms']:.4g} ± "
                     f"{c['reference_ci95_ms']:.2g} | {100 * c['difference_fraction']:+.2f} % | {yes[c['in_reference_ci']]} "
                     f"| {yes[c['reference_in_auto_ci']]} | {yes[c['within_target']]} "
                     f"| {c['auto_batch_simulations']} / {c['reference_batch_simulations']} |")
    n = doc["counts"]
    sims = sum(c["auto_batch_simulations"] for c in doc["cells"]), sum(c["reference_batch_simulations"] for c in doc["cells"])
    walls = sum(c["auto_wall_s"] for c in doc["cells"]), sum(c["reference_wall_s"] for c in doc["cells"])
    lines += ["", f"{n['cells']} cells: auto mean inside the 20-batch interval in {n['in_reference_ci']}, the 20-batch "
              f"mean inside auto's interval in {n['reference_in_auto_ci']}, the two within the "
              f"{100 * doc['ci_target_fraction']:g} % target in {n['within_target']}. Batch simulations: "
              f"{sims[0]} auto against {sims[1]} ({sims[1] / sims[0]:.2f}×); simulation wall: {walls[0]:.0f} s "
              f"against {walls[1]:.0f} s ({walls[1] / walls[0]:.2f}×)."]
    return "\n".join(lines)

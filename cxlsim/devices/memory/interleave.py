"""Interleaved memory modules: the geometry a memory role (or a microbenchmark) gives a media preset.

Contract: the media families (those declaring the ``media`` capability,
``cxlsim.devices.registry.families_of_kind("memory", "media")``) serve accesses on ``modules`` modules of one
preset, interleaved every ``interleave_B`` bytes (:mod:`cxlsim.devices.memory.media.media`). Before any model or
state is built, :func:`geometry_problem` checks what a preset alone cannot: the interleaving is a
whole number of the module's ``access_unit_B`` units, and one module's state stays within
:data:`~cxlsim.config.bounds.MAX_MODULE_STATE_ENTRIES` (the count of modules is bounded apart, by
:data:`~cxlsim.config.bounds.MAX_MODULES_PER_ROLE`). The system configuration and ``cxlsim
microbench`` both call it at load, each naming its own file or option and key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cxlsim.config.bounds import MAX_MODULE_STATE_ENTRIES

#: Parameters that size a media model's state (:func:`module_state_entries`).
MEDIA_STATE_KEYS = ("parallel_units_count", "write_queue_entries", "read_priority", "wcb_entries",
                    "controller_outstanding_count")


def module_state_entries(values: Mapping[str, Any]) -> dict[str, int]:
    """Entries of state one module's media model holds, by the parameter that sizes them (as
    :class:`~cxlsim.devices.memory.media.media.MediaState` allocates them, plus the controller's slots a
    saturating requester fills): banks, write-queue slots, write-combining-buffer entries (one at
    least), posted writes (banks × write-queue slots with ``read_priority``, else one per bank)."""
    banks, queue = int(values["parallel_units_count"]), int(values["write_queue_entries"])
    return {
        "parallel_units_count": banks,
        "write_queue_entries": queue + banks * (queue if values["read_priority"] else 1),
        "wcb_entries": max(int(values["wcb_entries"]), 1),
        "controller_outstanding_count": int(values["controller_outstanding_count"]),
    }


def geometry_problem(values: Mapping[str, Any], interleave_B: int) -> tuple[str, str] | None:
    """``None``, or ``(key, message)`` for the first problem of a media preset's ``values`` (its
    parameters, as a mapping; a memory family with neither ``access_unit_B`` nor the media model's
    state keys has nothing to check) interleaved every ``interleave_B`` bytes: key ``"interleave_B"``
    when the interleaving is not a whole number of units, else the parameter that sizes most of a
    module's state beyond the bound."""
    unit_B = int(values.get("access_unit_B") or 0)
    if unit_B and (interleave_B < unit_B or interleave_B % unit_B):
        return "interleave_B", (f"{interleave_B} B is not a multiple of the module's access_unit_B ({unit_B} B): "
                                "modules interleave whole units")
    if any(k not in values for k in MEDIA_STATE_KEYS):  # a memory family without the media model's state
        return None
    entries = module_state_entries(values)
    total = sum(entries.values())
    if total > MAX_MODULE_STATE_ENTRIES:
        key = max(entries, key=lambda k: entries[k])
        parts = ", ".join(f"{k}: {n:.3g}" for k, n in entries.items())
        return key, (f"state of one module: {total:.3g} entries (by the parameter sizing them: {parts}), above the bound of "
                     f"{MAX_MODULE_STATE_ENTRIES:.3g} on one module's state (cxlsim/config/bounds.py)")
    return None

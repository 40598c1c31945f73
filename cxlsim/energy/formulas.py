"""Energy of each device kind over an interval, from its preset parameters (units: J, W, ns, B).

Contract: pure functions of parameters and activity, each the hand calculation tests pin:

* media (DRAM, PMEM, SSD): ``modules × background_W × time`` plus, per byte, the media energy of
  the internal units read and written (``read/write_media_pJ_per_bit``, whole units: a 64 B write
  to PMEM that needs read-modify-write costs a 256 B read and a 256 B write) and the interface
  energy of the bytes requested (``io_pJ_per_bit``) — the same sum the media kernel charges;
* GPU: ``idle_power_W × time + (active_power_W − idle_power_W) × busy``;
* CPU: ``idle_power_W × time + (tdp_W − idle_power_W) × core-weighted busy``;
* near-data logic: ``static_W × time`` plus per element operation (``add/mul_pJ_per_op``) and per
  scratchpad byte; checkpointing logic: ``static_W × time + dma_pJ_per_B × bytes copied``;
* links: ``idle_power_W × time`` per link (and per switch) plus ``pJ_per_bit × bits`` per link
  crossed and per switch forwarding them.
"""

from __future__ import annotations

from collections.abc import Mapping

from cxlsim.config.params import ParamSet
from cxlsim.units import PJ, watts_over

BITS_PER_B = 8


def per_bit_J(pJ_per_bit: float, nbytes: float) -> float:
    """Energy of ``nbytes`` at ``pJ_per_bit``, J."""
    return nbytes * BITS_PER_B * pJ_per_bit * PJ


def background_J(power_W: float, modules: int, time_ns: float) -> float:
    """Background energy of ``modules`` modules of ``power_W`` each over ``time_ns``, J."""
    return watts_over(power_W * modules, time_ns)


def media_dynamic_J(params: ParamSet, traffic: Mapping[str, float]) -> float:
    """Dynamic energy of media traffic (``media_read_B``, ``media_write_B``, ``requested_B``), J."""
    return (per_bit_J(params.read_media_pJ_per_bit, traffic["media_read_B"])
            + per_bit_J(params.write_media_pJ_per_bit, traffic["media_write_B"])
            + per_bit_J(params.io_pJ_per_bit, traffic["requested_B"]))


def gpu_J(params: ParamSet, busy_ns: float, time_ns: float) -> tuple[float, float]:
    """(idle part, active extra) of a GPU busy ``busy_ns`` out of ``time_ns``, J."""
    return watts_over(params.idle_power_W, time_ns), watts_over(params.active_power_W - params.idle_power_W, busy_ns)


def cpu_J(params: ParamSet, core_busy_ns: float, time_ns: float) -> tuple[float, float]:
    """(idle part, active extra) of a host CPU; ``core_busy_ns`` is busy time × share of cores, J."""
    return watts_over(params.idle_power_W, time_ns), watts_over(params.tdp_W - params.idle_power_W, core_busy_ns)


def ndp_dynamic_J(params: ParamSet, dim: int, n_pooled: int, n_rows_updated: int, n_grads: int,
                  n_corrected: int) -> float:
    """Near-data logic operations of one batch, J: sum-pool ``n_pooled`` vectors (an add per element
    and a read-modify-write of the fp32 accumulator in the scratchpad), SGD-update
    ``n_rows_updated`` rows from ``n_grads`` gradients (an add per gradient element, a multiply per
    row element), and add ``n_corrected`` vectors in the relaxed-lookup correction."""
    fp32_B = 4
    adds = (n_pooled + n_grads + n_corrected) * dim
    muls = n_rows_updated * dim
    scratch_B = 2 * n_pooled * dim * fp32_B
    return (adds * params.add_pJ_per_op + muls * params.mul_pJ_per_op + scratch_B * params.scratchpad_pJ_per_B) * PJ


def dma_J(params: ParamSet, nbytes: float) -> float:
    """Checkpointing-logic DMA energy of copying ``nbytes`` (media and links charged apart), J."""
    return nbytes * params.dma_pJ_per_B * PJ

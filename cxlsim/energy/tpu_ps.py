"""Energy of one ``tpu-ps`` step by component, from its :class:`~cxlsim.systems.tpu_ps.TpuPsActivity`.

Contract: :func:`step_energy` returns ``{component: {"static": J, "active": J, "dynamic": J}}`` for
every component in :data:`COMPONENTS` (zeros where the run has none). With c chips, H = ⌈c /
chips_per_host⌉ hosts, P parameter servers (0 with tables in HBM) and T the step's wall time
(amortised checkpoint included):

* ``tpu_chips`` — static c·chip_idle_W·T; active c·(tensorcores_W·t_TC + sparsecores_W·t_SC), with
  t_TC, t_SC each chip's TensorCore and (mean) SparseCore busy time;
* ``hbm`` — static c·hbm_background_W·T; dynamic 8·bytes·hbm_pJ_per_bit (embedding traffic: 3× the
  gathered bytes in HBM, or vectors in and gradients out with parameter servers; MLP traffic: 6
  passes over the weights, 4 over the activations);
* ``ici`` (c > 1) — static (c·ici_links_per_chip/2 links)·ici_link_W·T; dynamic 8·(all-to-all +
  all-reduce bytes)·ici_pJ_per_bit;
* ``ps_cpus`` — static P·ps_idle_W·T; active ps_busy_W / ps_cores × the servers' core time;
* ``nics`` — static (P + H)·nic_W·T; dynamic 8·(bytes through each NIC)·nic_pJ_per_bit;
* ``host_cpus`` — static H·host_W·T.

Not charged: the checkpoint's storage (the distributed file system's energy), the network
switches between hosts and servers. Parameters: the energy keys of
:data:`~cxlsim.systems.tpu_ps.TPU_PS_SCHEMA`; each is read only where its component exists, so a
parameter that does not apply stays declared unused (:mod:`cxlsim.systems.reach`).
"""

from __future__ import annotations

from cxlsim.config.params import ParamSet
from cxlsim.systems.tpu_ps import TpuPsActivity
from cxlsim.units import PJ

COMPONENTS = ("tpu_chips", "hbm", "ici", "ps_cpus", "nics", "host_cpus")
PARTS = ("static", "active", "dynamic")
BITS_PER_B = 8
NS_TO_S = 1e-9


def step_energy(act: TpuPsActivity, p: ParamSet) -> dict[str, dict[str, float]]:
    """Energy of one step by component and part (module docstring), J."""
    e = {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}
    T = act.wall_ns * NS_TO_S
    c = act.chips
    chip = e["tpu_chips"]
    chip["static"] = c * p.chip_idle_W * T
    chip["active"] = c * p.tensorcores_W * act.tensorcore_busy_ns * NS_TO_S
    if act.sparsecore_busy_ns:
        chip["active"] += c * p.sparsecores_W * act.sparsecore_busy_ns * NS_TO_S
    e["hbm"]["static"] = c * p.hbm_background_W * T
    e["hbm"]["dynamic"] = BITS_PER_B * (act.embedding_hbm_B + act.mlp_hbm_B) * p.hbm_pJ_per_bit * PJ
    if c > 1:
        e["ici"]["static"] = c * p.ici_links_per_chip_count / 2 * p.ici_link_W * T
        e["ici"]["dynamic"] = BITS_PER_B * (act.a2a_B + act.allreduce_B) * p.ici_pJ_per_bit * PJ
    if act.servers:
        e["ps_cpus"]["static"] = act.servers * p.ps_idle_W * T
        e["ps_cpus"]["active"] = p.ps_busy_W / p.ps_cores_count * act.ps_core_busy_ns * NS_TO_S
        e["nics"]["dynamic"] = BITS_PER_B * act.nic_B * p.nic_pJ_per_bit * PJ
    e["nics"]["static"] = (act.servers + act.hosts) * p.nic_W * T
    e["host_cpus"]["static"] = act.hosts * p.host_W * T
    return e

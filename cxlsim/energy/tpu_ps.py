"""Energy of one ``tpu-ps`` step by component, from its :class:`~cxlsim.systems.tpu_ps.TpuPsActivity`.

Contract: :func:`step_energy` returns ``{component: {"static": J, "active": J, "dynamic": J}}`` for
every component in :data:`COMPONENTS` (zeros where the run has none). With c chips, H = ⌈c /
chips_per_host⌉ hosts, P parameter servers (0 with tables in HBM) and T the step's wall time
(amortised checkpoint included):

* ``tpu_chips`` (role ``tpu``) — static c·idle_W·T; active c·(tensorcores_W·t_TC + sparsecores_W·t_SC),
  with t_TC, t_SC each chip's TensorCore and (mean) SparseCore busy time;
* ``hbm`` (role ``tpu_hbm``) — static c·background_W·T; dynamic 8·bytes·pJ_per_bit (embedding traffic: 3× the
  gathered bytes in HBM, or vectors in and gradients out with parameter servers; MLP traffic: 6
  passes over the weights, 4 over the activations);
* ``ici`` (role ``ici``, c > 1) — static (c·links_per_chip/2 links)·link_W·T; dynamic 8·(all-to-all +
  all-reduce bytes)·pJ_per_bit;
* ``ps_cpus`` (role ``param_server``) — static P·idle_W·T; active busy_W / cores × the servers' core time;
* ``nics`` (roles ``ps_nic``, ``host_nic``) — static (P·power_W of ps_nic + H·power_W of host_nic)·T;
  dynamic 8·(bytes through each NIC)·its pJ_per_bit (each byte crosses one of each);
* ``host_cpus`` — static H·host_W·T (the system's ``tpu_ps.host_W``).

Not charged: the checkpoint's storage (the distributed file system's energy), the network
switches between hosts and servers. Parameters: the roles' energy keys
(:data:`~cxlsim.systems.tpu_ps.DEVICE_ENERGY_PARAMS`) and the system's ``host_W``; each is read only where its component exists, so a
parameter that does not apply stays declared unused (:mod:`cxlsim.systems.reach`).
"""

from __future__ import annotations

from cxlsim.config.params import ParamSet
from cxlsim.systems.tpu_ps import TpuPsActivity, TpuPsDevices
from cxlsim.units import PJ

COMPONENTS = ("tpu_chips", "hbm", "ici", "ps_cpus", "nics", "host_cpus")
PARTS = ("static", "active", "dynamic")
BITS_PER_B = 8
NS_TO_S = 1e-9


def step_energy(act: TpuPsActivity, p: ParamSet, devices: TpuPsDevices) -> dict[str, dict[str, float]]:
    """Energy of one step by component and part (module docstring), J: the system's ``host_W`` from
    ``p``, every device's parameters from its role's model (``devices``)."""
    e = {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}
    T = act.wall_ns * NS_TO_S
    c = act.chips
    tpu, hbm, ici = devices.chip.params, devices.hbm.params, devices.ici.params
    chip = e["tpu_chips"]
    chip["static"] = c * tpu.idle_W * T
    chip["active"] = c * tpu.tensorcores_W * act.tensorcore_busy_ns * NS_TO_S
    if act.sparsecore_busy_ns:
        chip["active"] += c * tpu.sparsecores_W * act.sparsecore_busy_ns * NS_TO_S
    e["hbm"]["static"] = c * hbm.background_W * T
    e["hbm"]["dynamic"] = BITS_PER_B * (act.embedding_hbm_B + act.mlp_hbm_B) * hbm.pJ_per_bit * PJ
    if c > 1:
        e["ici"]["static"] = c * ici.links_per_chip_count / 2 * ici.link_W * T
        e["ici"]["dynamic"] = BITS_PER_B * (act.a2a_B + act.allreduce_B) * ici.pJ_per_bit * PJ
    server_nic_W = 0.0
    if act.servers:
        server, ps_nic, host_nic = devices.server.params, devices.ps_nic.params, devices.host_nic.params
        e["ps_cpus"]["static"] = act.servers * server.idle_W * T
        e["ps_cpus"]["active"] = server.busy_W / server.cores_count * act.ps_core_busy_ns * NS_TO_S
        # each byte crosses a server's NIC and a host's: half of the NIC bytes through each kind
        e["nics"]["dynamic"] = BITS_PER_B * (act.nic_B / 2 * ps_nic.pJ_per_bit + act.nic_B / 2 * host_nic.pJ_per_bit) * PJ
        server_nic_W = act.servers * ps_nic.power_W
    e["nics"]["static"] = (server_nic_W + act.hosts * devices.host_nic.params.power_W) * T
    e["host_cpus"]["static"] = act.hosts * p.host_W * T
    return e

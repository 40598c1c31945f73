"""System configurations: ``configs/<name>.yaml`` resolved into devices by role and a pipeline.

File format::

    version: 1
    inherits: cxl-d        # optional: deep-merge over another system (by name or path)
    name: cxl-b
    description: ...
    workload: rm1          # default workload, replaced by --workload
    seed: 1
    batches: 20            # measured batches, or auto (sampling with stated confidence,
                           # cxlsim.systems.sampling: until the 95 % interval is within
                           # batches_ci_fraction of the mean)
    warmup_batches: 2      # simulated first, excluded from statistics; auto (with batches:
                           # auto): the steady state decides (MSER)
    batches_ci_fraction: 0.01   # auto's target: relative half-width of the 95 % interval (or "1%")
    devices:               # role: {preset, count, interleave_B, params: {overrides}}
      table_memory: {preset: pmem/paper, count: 4, interleave_B: 4096}
      ...
    pipeline: {tables_on: table_memory, embedding_engine: ndp, ...}   # see PIPELINE
    energy: {emulated_media: as_emulated}   # readings of the energy model; see ENERGY

Contract: :func:`load_system` validates everything (unknown keys, kinds, ranges, presets) and
raises :class:`~cxlsim.errors.ConfigError` naming the file and key path; ``--set`` overrides use
dotted paths into this document (``devices.table_memory.params.write_bw_GBps=2``,
``pipeline.relaxed_lookup=true``, ``energy.emulated_media=as_built``, ``batches=5``). A platform may give
``pipeline:`` and ``energy:`` defaults; the system file's own keys win over them. Systems are found by name through
:func:`~cxlsim.config.catalog.catalog_roots` ``("configs")``: the shipped ``configs/`` (package data)
then ``$CXLSIM_PATH/configs`` (later folders shadow by name).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cxlsim.config.bounds import MAX_MODULES_PER_ROLE, MAX_SEED
from cxlsim.config.catalog import Preset, catalog_file, catalog_roots, locate_preset
from cxlsim.config.origins import Origins
from cxlsim.config.params import (
    Param,
    ParamSet,
    PlausibilityWarning,
    Schema,
    relocated_warnings,
    unknown_key_message,
)
from cxlsim.config.yamlio import apply_sets, check_version, read_yaml
from cxlsim.devices.memory.interleave import geometry_problem
from cxlsim.devices.memory.media.media_index import PATH_LINE_B
from cxlsim.devices.registry import family_kind, get_family, load_preset
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems import axes
from cxlsim.systems.host_agreement import check_host_agreement
from cxlsim.systems.models import SYSTEM_MODELS
from cxlsim.systems.platform import DEFAULT_PLATFORM, Platform, load_platform, merge
from cxlsim.systems.sampling import AUTO, DEFAULT_CI_FRACTION, Sampling, parse_ci
from cxlsim.workloads.catalog import workload_path
from cxlsim.workloads.schema import WORKLOAD_SCHEMA

#: ``model:`` of a system, unless it names another: the shared op-graph dataflow over device models
#: (the models: :data:`~cxlsim.systems.models.SYSTEM_MODELS`; a model's own parameter section, such
#: as ``tpu_ps:``, is a top key of the systems of that model only).
DEFAULT_MODEL = "dataflow"

#: A system file's own values (its sections are :data:`SECTIONS`); ``batches`` and
#: ``warmup_batches`` also take ``auto``, ``batches_ci_fraction`` also a percentage (``1%``).
SYSTEM = Schema("system", (
    Param("version", int, "file format version", default=1, minimum=1, maximum=1),
    Param("inherits", str, "the system (name or YAML path) this file is deep-merged over; name and "
          "description are not inherited", default=""),
    Param("name", str, "the system's name (default: the file's stem)", default=""),
    Param("description", str, "one line shown in listings", default=""),
    Param("model", str, "the simulation model that runs the system (its own parameters are a section named "
          "after it, e.g. tpu_ps:)", default=DEFAULT_MODEL, choices=SYSTEM_MODELS.names),
    Param("platform", str, "the apparatus that fills the device roles (configs/platforms/; --platform "
          "replaces it)", default=DEFAULT_PLATFORM),
    Param("workload", str, "default workload: a catalog name (cxlsim workload lists them) or a YAML path; "
          "--workload replaces it", default="rm1"),
    Param("seed", int, "seed of the one random source (input streams)", default=0, minimum=0, maximum=MAX_SEED),
    Param("batches", int, "measured batches, or auto: sampled until the 95 % interval is within "
          "batches_ci_fraction of the mean", default=20, minimum=1),
    Param("warmup_batches", int, "batches simulated first and excluded from statistics, or auto (with "
          "batches: auto; the steady state decides, MSER)", default=2, minimum=0),
    Param("batches_ci_fraction", float, "batches: auto's target: relative half-width of the 95 % interval "
          "(or a percentage such as 1%)", default=DEFAULT_CI_FRACTION, minimum=0, maximum=1,
          exclusive_minimum=True),
))
#: A system file's sections, each a mapping.
SECTIONS = {
    "devices": "device roles: role -> {preset, count, interleave_B, levels, params} or family/name; merged "
               "over the platform's",
    "pipeline": "the dataflow's settings (its axes pick implementations); merged over the platform's",
    "workload_overrides": "workload parameters replaced for this system's runs (the workload file's keys)",
    "topology": "accelerators, memory devices and the switch tree between them",
    "energy": "readings of the energy model (never change timing); merged over the platform's",
}
TOP_KEYS = {p.name for p in SYSTEM.params} | set(SECTIONS)

#: Roles a platform or system may give beyond what the pipeline needs; given, a model must use them.
OPTIONAL_ROLES = ("replay_host",)
#: The family kind whose roles take ``count`` modules interleaved every ``interleave_B`` bytes
#: (:data:`cxlsim.devices.registry.KINDS`).
MEMORY_KIND = "memory"
#: The kind of a CXL memory device (a composite of link, controller and media, ``cxl_mem``): a
#: memory role given one holds its media's channels, behind its link (:attr:`DeviceRole.via`).
CXL_MEMORY_KIND = "cxl_mem"

#: Device roles a pipeline may refer to, and what each is.
ROLES = {
    "gpu": "the GPU (bottom/top MLP, interaction, optimizer)",
    "host_cpu": "the host CPU (training software; embedding ops when embedding_engine=host_cpu)",
    "host_dram": "host DRAM modules (vector cache, bounce buffers, tables for the dram system)",
    "table_memory": "modules holding the embedding tables (data region) and, for PMEM, the log region",
    "checkpoint_storage": "modules receiving redo checkpoints when not the table memory (e.g. SSD)",
    "ndp": "near-data computing logic beside the table memory (embedding lookup/update)",
    "ckpt_logic": "checkpointing logic (DMA engine, counters, persistent flags)",
    "fabric_link": "the link between the embedding engine's device and the switch/host (CXL); also the "
                   "trunk links between switch levels",
    "gpu_link": "the GPU's link to the switch/host (CXL or PCIe)",
    "host_link": "the host's link to the switch (CXL)",
    "switch": "the CXL switch (per-hop latency; `levels` switch levels between devices)",
    "cxl_protocol": "CXL.cache/DCOH, CXL.mem and CXL.io protocol costs",
    "pcie": "PCIe link and CUDA-like software path (launch, sync, memcpy)",
    "replay_host": "optional: the host whose PyTorch dispatch a replaying GPU's cycles were measured with (the "
                   "prototype's Vortex replays the RTX 3090's step as run from an i5-9600K)",
    "tpu": "the accelerator chip of model tpu_ps (TensorCores, SparseCores; one per topology.gpus_count)",
    "tpu_hbm": "each chip's HBM (model tpu_ps: embedding tables placed in HBM, the MLPs' traffic)",
    "ici": "the chip-to-chip interconnect (model tpu_ps: all-to-all of the ids, all-reduce of the MLP gradients)",
    "param_server": "a CPU parameter server (model tpu_ps: tables placed on parameter servers)",
    "ps_nic": "a parameter server's NIC (model tpu_ps)",
    "host_nic": "an accelerator host's NIC (model tpu_ps)",
    "tpu_host": "an accelerator host, its CPU, DRAM and board (model tpu_ps: one per tpu_ps.chips_per_host_count chips)",
}

#: Device families each role takes (the models the pipeline calls on the role implement their API):
#: family names, or ``kind:<kind>`` for every family of that kind (a family registered outside
#: cxlsim included: a memory family implements the media API).
ROLE_FAMILIES = {
    "gpu": ("gpu",), "host_cpu": ("cpu",), "host_dram": ("dram",),
    "table_memory": (f"kind:{MEMORY_KIND}", f"kind:{CXL_MEMORY_KIND}"),
    "checkpoint_storage": (f"kind:{MEMORY_KIND}", f"kind:{CXL_MEMORY_KIND}"),
    "ndp": ("ndp",), "ckpt_logic": ("ckpt_logic",),
    "fabric_link": ("cxl_link",), "gpu_link": ("cxl_link",), "host_link": ("cxl_link",),
    "switch": ("cxl_switch",), "cxl_protocol": ("cxl_protocol",), "pcie": ("pcie",),
    "replay_host": ("cpu",),
    "tpu": ("tpu",), "tpu_hbm": ("kind:accelerator_memory",), "ici": ("ici",), "param_server": ("param_server",),
    "ps_nic": ("nic",), "host_nic": ("nic",), "tpu_host": ("host",),
}

#: How many devices of a role a system has: one per GPU (``gpu``), one per memory device (``mem``:
#: each CXL-MEM or card has its own logic), else one per system (memory roles' modules are provisioned,
#: :mod:`cxlsim.systems.provision`; links and switches are the fabric's, :mod:`cxlsim.systems.topology`).
ROLE_SCOPE = {"gpu": "gpu", "ndp": "mem", "ckpt_logic": "mem"}

#: CXL 3.0: at most 4095 devices in the fabric of one root port (12-bit port-based routing ids).
MAX_FABRIC_DEVICES = 4095
#: Switch levels one fabric may have: a tree of switches with a fan-out of 2 or more that is deeper
#: than 12 levels has more leaves than MAX_FABRIC_DEVICES.
MAX_SWITCH_LEVELS = MAX_FABRIC_DEVICES.bit_length()

#: The keys of a ``devices:`` entry (a role's device). ``count`` and ``interleave_B`` apply to memory
#: roles given a memory-kind family (modules) or a CXL memory device (devices), ``levels`` to the
#: switch role.
DEVICE_ENTRY = Schema("devices entry", (
    Param("preset", str, "the device: a preset family/name (cxlsim devices lists them) or a YAML path"),
    Param("count", int, "modules of a memory role, interleaved (given a CXL memory device: devices, each on a "
          "root port of its own)", default=1, minimum=1, maximum=MAX_MODULES_PER_ROLE),
    Param("interleave_B", int, "bytes placed on one module (or CXL memory device) before the next (memory roles)",
          default=4096, minimum=64),
    Param("levels", int, "switch levels between devices (the switch role)", default=1, minimum=0,
          maximum=MAX_SWITCH_LEVELS),
    Param("params", dict, "overrides of the preset's parameters (its family's keys; a CXL memory device's "
          "parts: <part>.params.<key>)", default=None),
))
DEVICE_KEYS = DEVICE_ENTRY.by_name()

TOPOLOGY = Schema(
    "topology",
    (
        Param("gpus_count", int, "accelerators training data-parallel, each on the workload's per-GPU batch (the "
              "tpu-ps model's chips)", default=1, minimum=1, maximum=MAX_FABRIC_DEVICES),
        Param("cxl_mems_count", int, "memory devices holding the embedding tables (CXL-MEMs, or PCIe cards); each "
              "has the table_memory role's modules, its own near-data and checkpointing logic", default=1,
              minimum=1, maximum=MAX_FABRIC_DEVICES),
        Param("fanout_count", int, "devices (or child switches) under each switch of the tree; 0 = the switch "
              "preset's ports less its upstream port", default=0, minimum=0, maximum=1024),
        Param("attach_policy", str, "where devices hang on the leaf switches: 'packed' (GPUs, then CXL-MEMs, left "
              "to right) or 'interleaved' (GPU, CXL-MEM, GPU, ...)", default="packed", choices=("packed", "interleaved")),
        Param("tables_policy", str, "where tables live: 'whole' (each table on one CXL-MEM, spread to balance "
              "bytes) or 'row_sharded' (every table's rows split over all CXL-MEMs); unset, it follows from the "
              "topology (cxlsim.systems.scale.tables_policy)", default="whole",
              choices=("whole", "row_sharded")),
        Param("symmetry", str, "simulate one representative group of identical devices and load the shared "
              "fabric analytically (docs/scale-out.md, 'Symmetry'): 'off' (full detail), 'on' (reduce or refuse "
              "with the reason), 'auto' (the default: reduce from 32 GPUs on, else full detail)", default="auto",
              choices=("off", "on", "auto")),
    ),
)

PIPELINE = Schema(
    "pipeline",
    (
        Param("tables_on", str, "role holding the embedding tables", choices=("table_memory", "host_dram")),
        Param("embedding_engine", str, "who computes lookup/update", choices=axes.choices("embedding_engine")),
        Param("data_movement", str, "how pooled vectors and gradients move", choices=axes.choices("data_movement")),
        Param("persistence", str, "per-batch persistence", choices=axes.choices("persistence")),
        Param("checkpoint_on", str, "role receiving the redo record or logs", default="table_memory",
              choices=("table_memory", "checkpoint_storage")),
        Param("checkpoint_agent", str, "who copies rows into the checkpoint", default="ckpt_logic",
              choices=axes.choices("checkpoint_agent")),
        Param("mlp_pull", str, "how MLP parameters reach the checkpoint", default="cxl_cache",
              choices=axes.choices("mlp_pull")),
        Param("relaxed_lookup", bool, "batch n+1's lookup during batch n, corrected afterwards (docs/design.md#relaxed-embedding-lookup)", default=False),
        Param("relaxed_mlp_log", bool, "MLP logging only in the GPU's interaction/top-MLP window (docs/design.md#relaxed-batch-aware-checkpoint)", default=False),
        Param("grads_handoff", str, "when the embedding gradients leave the GPU: 'after_backward' (the unmodified "
              "loop: sparse gradients exist when loss.backward() returns, after the bottom-MLP backward) or "
              "'after_interaction' (exported through CXL.cache as soon as the interaction backward produces "
              "them; the bottom-MLP backward runs beside the update). The platform gives the default "
              "(docs/timing-model.md)", default="after_backward", choices=("after_backward", "after_interaction")),
        Param("redo_mlp_pull", str, "redo persistence: when the checkpoint agent pulls the MLP parameters into the "
              "record: 'after_update' (the whole record after the embedding update) or 'with_optimizer' (as "
              "soon as the optimizer step has produced them, beside the update; docs/design.md#redo-checkpoint, cxl-d); the commit "
              "flag follows both parts", default="after_update", choices=("after_update", "with_optimizer")),
        Param("undo_log_start", str, "undo logging: when the checkpointing logic starts the embedding log: "
              "'lookup' (after the batch's lookup, when the CXL-MEM goes idle: the paper's Figure 12b, "
              "'when forward propagation of bottom-MLP is completed at 0.6 ms', 'fully utilizing the idle "
              "time of CXL-MEM'; docs/design.md#batch-aware-undo-log) or 'inputs' (its own engine, as soon as the batch's indices are "
              "there and the previous update is done, sharing the media with the lookup)", default="lookup",
              choices=("lookup", "inputs")),
        Param("log_copy_channels", str, "the checkpointing logic's copies: 'separate' read and write request pools "
              "(AXI4's independent read and write channels: read_outstanding_count reads beside "
              "write_outstanding_count writes) or one 'shared' closed loop of read_outstanding_count requests of "
              "either kind", default="separate", choices=("separate", "shared")),
        Param("correction", str, "relaxed lookup: where the correction's adds run: 'fused' (in batch n's update "
              "pass, on the logic's lanes, as it computes each row's change), 'own_engine' (an adder bank "
              "of its own, beside the update) or 'serial' (on the logic's lanes, before the update); "
              "docs/timing-model.md", default="fused", choices=axes.choices("correction")),
        Param("bounce", str, "software copies that bounce through host memory (device -> pinned host buffer -> "
              "device, the pcie system's): 'serial' (the first leg's copy returns before the second is issued, "
              "as a synchronous cudaMemcpy followed by the host's copy to the card does) or 'chunked' (the legs "
              "overlap chunk by chunk through two staging buffers of the pcie preset's bounce_chunk_B)",
              default="serial", choices=("serial", "chunked")),
        Param("vector_cache_GB", float, "host-DRAM LRU cache of embedding vectors in front of the table memory", default=0.0, minimum=0),
        Param("table_placement", str, "where the host engine's tables live: 'single' (all on tables_on), "
              "'interleave' (pages spread over host_dram and tables_on at table_placement_weights, as Linux's "
              "weighted interleave does), 'hot_first' (the hottest pages on host_dram up to "
              "table_placement_near_GB, the rest on tables_on: the state TPP-like promotion converges to)",
              default="single", choices=("single", "interleave", "hot_first")),
        Param("table_placement_near_weight", int, "interleave: of every near + far consecutive pages, the first "
              "near sit in host_dram (Linux's weighted interleave weight of the DRAM node)", default=1, minimum=0),
        Param("table_placement_far_weight", int, "interleave: ... and the next far in tables_on (the CXL node's "
              "weight); DDR:CXL = 83:17 is near 83, far 17", default=1, minimum=0),
        Param("table_placement_near_GB", float, "hot_first: host DRAM given to the hottest table pages",
              default=16.0, minimum=0),
        Param("vector_cache_start", str, "the vector cache's state at batch 0: 'steady' (the state its LRU policy "
              "reaches over the input stream after long training, built from the stream's stationary popularity: "
              "a run measures training, not its first batches) or 'empty' (a cold start); docs/timing-model.md",
              default="steady", choices=("empty", "steady")),
        Param("lookup_dedup", bool, "read each distinct row once per bag set (true) or once per index (false)", default=False),
        Param("table_region_offset_B", int, "byte address where the data region starts", default=0, minimum=0),
    ),
)


#: Readings of the energy model (``energy:`` of a system or platform; :mod:`cxlsim.energy.model`).
#: They never change timing.
ENERGY = Schema(
    "energy",
    (
        Param("emulated_media", str, "a memory role whose preset emulates another device (its `emulates:`, "
              "e.g. the prototype's DDR4 controllers that delay responses to emulate Optane PMEM): "
              "'as_emulated' prices its static and dynamic energy as the emulated device's (its energy "
              "parameters, its modules by capacity: the comparison of PMEM designs the paper makes), "
              "'as_built' as the apparatus' own (the DDR4 it is built of); docs/energy.md",
              default="as_emulated", choices=("as_built", "as_emulated")),
    ),
)


def emulating_roles(devices: dict[str, DeviceRole]) -> dict[str, str]:
    """Role → the preset its device emulates, for the roles whose preset names one (``emulates:``)."""
    return {role: d.preset.emulates for role, d in devices.items() if d.preset.emulates is not None}


def pipeline_schema() -> Schema:
    """:data:`PIPELINE` and the pipeline keys the registered axis implementations declare
    (``PARAMS`` of a class, e.g. a persistence scheme's own settings)."""
    # a subclass registered under its own name shares its base's keys (each key once)
    extra = list({id(prm): prm for axis in axes.AXES for name in axes.names(axis)
                  for prm in getattr(axes.implementation(axis, name), "PARAMS", ())}.values())
    return Schema("pipeline", PIPELINE.params + tuple(extra)) if extra else PIPELINE


@dataclass(frozen=True)
class DeviceRole:
    """A resolved device role: the preset (one module) and how many modules the system holds."""

    role: str
    preset: Preset
    count: int = 1
    interleave_B: int = 4096
    levels: int = 1
    #: the CXL memory device (a ``cxl_mem`` preset) the role's modules sit behind, when the role was
    #: given one: ``preset`` is then its media (``count`` channels interleaved at its
    #: ``media_interleave_B``), and a requester on the host reaches them across its link
    via: Preset | None = None
    #: with ``via``: the devices the role's data is spread over (each on a root port of its own,
    #: with its own link, controller, queues and media; a pool's endpoints), ``via_interleave_B``
    #: bytes on one before the next (as the kernel interleaves pages over NUMA nodes; a pool's own
    #: interleave)
    via_count: int = 1
    via_interleave_B: int = 4096

    @property
    def params(self) -> ParamSet:
        return self.preset.params


@dataclass(frozen=True)
class SystemConfig:
    name: str
    description: str
    workload: str
    seed: int
    batches: int | str  # a count, or "auto" (:mod:`cxlsim.systems.sampling`; a result's config holds the count)
    warmup_batches: int | str
    devices: dict[str, DeviceRole]
    pipeline: ParamSet | None  # None for a model without a dataflow pipeline (tpu_ps)
    workload_overrides: dict[str, Any] = field(default_factory=dict)
    workload_overrides_where: str = "--set"  # the file or option that gave workload_overrides
    source: str = ""
    document: dict[str, Any] = field(default_factory=dict)
    model: str = DEFAULT_MODEL
    model_params: ParamSet | None = None  # the model's own parameters (its params_key section), if any
    model_params_key: str = ""  # that section's key (tpu_ps)
    energy: ParamSet = field(default_factory=lambda: ENERGY.validate({}, {}, "default"))  # ENERGY readings
    topology: ParamSet = field(default_factory=lambda: TOPOLOGY.validate({}, {}, "default"))
    platform: str = DEFAULT_PLATFORM  # the apparatus that filled the roles (configs/platforms/)
    batches_ci_fraction: float = DEFAULT_CI_FRACTION  # batches: auto's target
    origins: Origins | None = field(default=None, compare=False, repr=False)  # where each value came from

    def blame(self, exc: ConfigError) -> ConfigError:
        """``exc``, raised naming this system's file (or the single origin of its workload
        overrides) for a key of it, re-raised naming the input that gave that key."""
        if self.origins is None or not exc.key:
            return exc
        for placeholder in (self.source, self.workload_overrides_where):
            if exc.where == placeholder:
                return self.origins.blame(exc, placeholder)
        return exc

    def origin_of(self, *keys: str) -> tuple[str, str]:
        """``(file or option, key path there)`` of the first of ``keys`` some input gave (a system
        or platform file, a --set, an option), else this system's file and the first key: where a
        refusal caused by these settings is blamed."""
        for key in keys:
            if self.origins is not None and self.origins.given(key):
                return self.origins.of(key)
        return self.source, keys[0]

    @property
    def tpu_ps(self) -> ParamSet | None:
        """The ``tpu_ps:`` section (:attr:`model_params` of a model that reads one under that key)."""
        return self.model_params if self.model_params_key == "tpu_ps" else None

    @property
    def sampling(self) -> Sampling:
        """How the run picks its batches (:class:`~cxlsim.systems.sampling.Sampling`)."""
        return Sampling(self.batches, self.warmup_batches, self.batches_ci_fraction)

    def role(self, name: str) -> DeviceRole:
        if name not in self.devices:
            raise ConfigError(self.source, f"devices.{name}", f"missing: the pipeline needs a {name} ({ROLES.get(name, '')})")
        return self.devices[name]

    def has(self, name: str) -> bool:
        return name in self.devices

    def resolved(self) -> dict[str, Any]:
        """The fully resolved configuration (embedded in result files)."""
        out: dict[str, Any] = {
            "name": self.name,
            "platform": self.platform,
            "model": self.model,
            "workload": self.workload,
            "seed": self.seed,
            "batches": self.batches,
            "warmup_batches": self.warmup_batches,
            "pipeline": self.pipeline.as_dict() if self.pipeline is not None else {},
            "devices": {
                r: {"preset": d.preset.name, "count": d.count, "interleave_B": d.interleave_B, "levels": d.levels,
                    "params": d.params.as_dict(),
                    **({"devices_count": d.via_count, "devices_interleave_B": d.via_interleave_B}
                       if d.via_count > 1 else {})}
                for r, d in self.devices.items()
            },
            "workload_overrides": dict(self.workload_overrides),
            "topology": self.topology.as_dict(),
            "energy": self.energy.as_dict(),
        }
        if self.model_params is not None:
            out[self.model_params_key] = self.model_params.as_dict()
        return out


def list_systems() -> list[str]:
    names: set[str] = set()
    for root in catalog_roots("configs"):
        if root.is_dir():
            names.update(p.stem for p in root.glob("*.yaml"))
    return sorted(names)


def system_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    found = catalog_file("configs", f"{name_or_path}.yaml")
    if found is None:
        raise ConfigError(name_or_path, "", "no such system" + unknown_key_message(name_or_path, list_systems())[len("unknown key"):]
                          + f" (known: {', '.join(list_systems())})")
    return found


def load_system(name_or_path: str, sets: list[tuple[str, Any]] | None = None,
                set_origins: Mapping[str, tuple[str, str]] | None = None) -> SystemConfig:
    """Load ``configs/<name>.yaml`` (or a path) on its platform, apply ``sets`` and validate.

    Devices: the platform (``platform:`` of the file or ``--set platform=NAME``, default
    :data:`~cxlsim.systems.platform.DEFAULT_PLATFORM`) fills every role the pipeline needs; the
    file's own ``devices:`` entries are merged over the platform's; ``--set devices.*`` last. A role
    the pipeline does not use is refused (it would be accepted and change nothing).

    Errors name the input that gave the offending value (:mod:`cxlsim.config.origins`): the system
    file (or the one it inherits the value from) and its key, the platform file and its entry, or
    the set: ``--set KEY``, or where ``set_origins`` says a set key came from (``(file, key path
    there)``: a sweep spec's axis).
    """
    path = system_path(name_or_path)
    where = str(path)
    origins = Origins(where)

    def relocate(at: str, key: str) -> tuple[str, str]:  # a value checked under the file: who gave it
        return origins.of(key) if at == where and key else (at, key)

    with relocated_warnings(relocate):
        return _load_system(path, where, origins, sets, set_origins)


def _load_system(path: Path, where: str, origins: Origins, sets: list[tuple[str, Any]] | None,
                 set_origins: Mapping[str, tuple[str, str]] | None) -> SystemConfig:
    """:func:`load_system`'s body, under its warnings' relocation."""
    doc = _read_with_parents(path, (), origins)
    if isinstance(doc.get("devices"), dict):  # `role: family/name` is short for {preset: ...}
        doc["devices"] = {r: {"preset": d} if isinstance(d, str) else d for r, d in doc["devices"].items()}
    sets = list(sets or [])
    for i, (key, value) in enumerate(sets):
        origins.add(value, (SET_RANK, i), *(set_origins or {}).get(key, ("--set", key)), key, replace=True)
    doc = _apply(doc, [(k, v) for k, v in sets if not k.startswith("devices.")], set_origins)
    at = origins.where

    def located(check: Any, *args: Any) -> Any:  # check(..., where, ...) naming the file: blamed per key
        try:
            return check(*args)
        except ConfigError as exc:
            raise origins.blame(exc, where) from None

    located(check_version, doc, where)  # a --set version= is checked like the file's

    model_name = str(doc.get("model", DEFAULT_MODEL))
    model = SYSTEM_MODELS.get(model_name, *origins.of("model"))
    for key in doc:
        if key not in TOP_KEYS and key != model.params_key:
            owners = [n for n in SYSTEM_MODELS if SYSTEM_MODELS.get(n).params_key == key]
            if owners:
                raise ConfigError(*origins.of(str(key)), f"the parameters of model {' or '.join(owners)} "
                                  f"(this system's model is {model_name}: set model: {owners[0]})")
            raise ConfigError(*origins.of(str(key)), unknown_key_message(key, TOP_KEYS))
    ints: dict[str, Any] = {}
    for key in ("seed", "batches", "warmup_batches"):
        declared = SYSTEM.by_name()[key]
        value = doc.get(key, declared.default)
        if key != "seed" and value == AUTO:
            ints[key] = AUTO
            continue
        ints[key] = declared.coerce(value, *origins.of(key))
    ci = parse_ci(doc.get("batches_ci_fraction", DEFAULT_CI_FRACTION), ": ".join(origins.of("batches_ci_fraction")))
    try:
        Sampling(ints["batches"], ints["warmup_batches"], ci)
    except InputError as exc:
        raise ConfigError(*origins.of("warmup_batches"), str(exc)) from None
    pipeline_doc = located(_mapping, doc, "pipeline", where, "a mapping of parameter: value")
    own_doc = doc.get(model.params_key) if model.params_key else None
    platform_name = doc.get("platform", DEFAULT_PLATFORM)
    try:
        platform = load_platform(platform_name)
    except ConfigError as exc:
        if exc.where != "--platform":  # an error inside the platform's file: it names it
            raise
        raise ConfigError(*origins.of("platform"), exc.message) from None
    check_platform(platform)
    pipeline, own = None, None
    if model.params_key:  # the model's own parameters
        key = model.params_key
        if own_doc is not None and not isinstance(own_doc, dict):
            raise ConfigError(*origins.of(key), "expected a mapping of parameter: value")
        own_doc = own_doc or {}
        sources = {k: str(v["source"]) for k, v in own_doc.items() if isinstance(v, dict) and "source" in v}
        try:
            own = model.params_schema.validate({k: _value(v) for k, v in own_doc.items()}, sources, where, f"{key}.")
        except ConfigError as exc:
            raise origins.blame(exc, where) from None
    if not model.pipeline:
        if pipeline_doc:
            into = f" (its parameters go under {model.params_key}:)" if model.params_key else ""
            raise ConfigError(*origins.of("pipeline"), f"model {model_name} has no dataflow pipeline{into}")
    else:
        # the platform's pipeline defaults (apparatus-dependent settings), under the system's own
        declared = pipeline_schema().by_name()
        for key, value in platform.pipeline.items():
            if key not in declared:
                raise ConfigError(platform.path, f"pipeline.{key}", unknown_key_message(key, declared))
            declared[key].coerce(value, platform.path, f"pipeline.{key}")  # a bad value names the platform file
        origins.add(platform.pipeline, PLATFORM_PIPELINE_RANK, platform.path, "pipeline", "pipeline", owns=False)
        schema = pipeline_schema()
        try:
            pipeline = schema.validate({**platform.pipeline, **pipeline_doc}, {}, where, "pipeline.")
        except ConfigError as exc:
            raise origins.blame(exc, where) from None
    topology_doc = located(_mapping, doc, "topology", where, "a mapping of parameter: value")
    if isinstance(topology_doc.get("symmetry"), bool):  # YAML 1.1 reads `off`/`on` as false/true
        topology_doc = {**topology_doc, "symmetry": "on" if topology_doc["symmetry"] else "off"}
    try:
        topology = TOPOLOGY.validate(topology_doc, {}, where, "topology.")
    except ConfigError as exc:
        raise origins.blame(exc, where) from None
    declared = ENERGY.by_name()
    for key, value in platform.energy.items():  # the platform's energy readings, under the system's own
        if key not in declared:
            raise ConfigError(platform.path, f"energy.{key}", unknown_key_message(key, declared))
        declared[key].coerce(value, platform.path, f"energy.{key}")
    origins.add(platform.energy, PLATFORM_PIPELINE_RANK, platform.path, "energy", "energy", owns=False)
    energy_doc = located(_mapping, doc, "energy", where, "a mapping of energy setting: value")
    try:
        energy = ENERGY.validate({**platform.energy, **energy_doc}, {}, where, "energy.")
    except ConfigError as exc:
        raise origins.blame(exc, where) from None
    name = str(doc.get("name", path.stem))
    devices = _devices((name, *_ancestors(path, ())), located(_mapping, doc, "devices", where, "a mapping role: {preset: ...}"),
                       pipeline, platform, sets, origins, set_origins, None if model.pipeline else list(model.roles))
    workload_overrides = located(_mapping, doc, "workload_overrides", where, "a mapping of workload parameter: value")
    declared = WORKLOAD_SCHEMA.by_name()
    for key, value in workload_overrides.items():  # each value as the workload will read it
        kp = f"workload_overrides.{key}"
        if key not in declared:
            raise ConfigError(*origins.of(kp), unknown_key_message(key, declared))
        declared[key].coerce(value, *origins.of(kp))
    workload = located(_workload_name, doc.get("workload", "rm1"), where)
    cfg = SystemConfig(
        name=name,
        description=str(doc.get("description", "")),
        workload=workload,
        seed=ints["seed"],
        batches=ints["batches"],
        warmup_batches=ints["warmup_batches"],
        devices=devices,
        pipeline=pipeline,
        workload_overrides=dict(workload_overrides),
        workload_overrides_where=at("workload_overrides"),
        source=where,
        document=doc,
        model=model_name,
        model_params=own,
        model_params_key=model.params_key or "",
        platform=platform.name,
        topology=topology,
        batches_ci_fraction=ci,
        energy=energy,
        origins=origins,
    )
    if not emulating_roles(devices):
        energy.skip("emulated_media", "no device of this system emulates another (no role's preset names "
                    "`emulates:`), so both readings price the same devices")
    if model.pipeline:
        try:
            _check_roles(cfg, where, platform.path)
            check_host_agreement(cfg, where)
        except ConfigError as exc:
            raise origins.blame(exc, where) from None
    else:
        missing = [r for r in model.roles if r not in devices]
        if missing:
            raise ConfigError(at("devices"), f"devices.{missing[0]}",
                              f"model {model_name} needs device roles {', '.join(model.roles)}; missing {', '.join(missing)}")
    return cfg


#: Ranks of the layers a configuration is built from (:class:`~cxlsim.config.origins.Origins`):
#: the platform's pipeline defaults and role entries, then the system files (the most distant
#: ancestor first), then the sets in order.
PLATFORM_PIPELINE_RANK = (0, 0, 0)
PLATFORM_ROLE_RANK = 0
FILE_RANK = 1
SET_RANK = 2


def _apply(doc: dict[str, Any], sets: list[tuple[str, Any]],
           set_origins: Mapping[str, tuple[str, str]] | None) -> dict[str, Any]:
    """:func:`apply_sets`, an error naming where the set came from (``set_origins``, else --set)."""
    for key, value in sets:
        where, there = (set_origins or {}).get(key, ("--set", key))
        try:
            doc = apply_sets(doc, [(key, value)])
        except ConfigError as exc:
            raise ConfigError(where, there if where != "--set" else exc.key, exc.message) from None
    return doc


def _devices(system: tuple[str, ...], file_devices: Any, pipeline: ParamSet | None, platform: Any,
             sets: list[tuple[str, Any]], origins: Origins, set_origins: Mapping[str, tuple[str, str]] | None,
             model_roles: list[str] | None = None) -> dict[str, DeviceRole]:
    """The system's device roles: the platform's for the roles the pipeline needs (an analytic
    model: ``model_roles``), the file's entries merged over them, then ``--set devices.*`` (see
    :func:`load_system`). ``system``: its name and the names of the systems it inherits from,
    nearest first (a platform's group that names an ancestor applies to its descendants).
    ``origins`` gets the platform's entries; an error names where its value came from."""
    if not isinstance(file_devices, dict):
        raise ConfigError(*origins.of("devices"), "expected a mapping role: {preset: ...}")
    for role in file_devices:
        if role not in ROLES:
            raise ConfigError(*origins.of(f"devices.{role}"), unknown_key_message(role, ROLES) + f" (roles: {', '.join(ROLES)})")
    needed = needed_roles(pipeline) if pipeline is not None else list(model_roles or [])
    if pipeline is not None:  # optional roles the platform or the file gives
        needed += [r for r in OPTIONAL_ROLES if r in file_devices or platform.role_spec(system, r) is not None]
    specs: dict[str, Any] = {}
    platform_params: dict[str, tuple[Any, set[str]]] = {}  # role: (the platform's preset, its params)
    for role in needed:
        spec = platform.role_spec(system, role)
        for j, (there, entry) in enumerate(platform.role_layers(system, role)):
            origins.add(entry, (PLATFORM_ROLE_RANK, 1, j), platform.path, there, f"devices.{role}")
        if isinstance(spec, dict) and isinstance(spec.get("params"), dict):
            platform_params[role] = (spec.get("preset"), set(spec["params"]))
        if role in file_devices:
            spec = merge(spec or {}, file_devices[role]) if isinstance(file_devices[role], dict) else file_devices[role]
        if spec is not None:
            specs[role] = spec
    device_sets = [(k, v) for k, v in sets if k.startswith("devices.")]
    for key, _ in device_sets:
        role = key.split(".")[1]
        if role not in ROLES:
            where, there = (set_origins or {}).get(key, ("--set", ".".join(key.split(".")[:2])))
            raise ConfigError(where, there, unknown_key_message(role, ROLES) + f" (roles: {', '.join(ROLES)})")
    for role in list(file_devices) + [k.split(".")[1] for k, _ in device_sets]:
        if role not in needed:
            why = "its pipeline" if pipeline is not None else "its analytic model"
            raise ConfigError(*origins.of(f"devices.{role}"), f"{system[0]} does not use a {role} role ({why} needs "
                              f"{', '.join(needed) or 'none'}): the entry would change nothing")
    if device_sets:
        specs = _apply({"devices": specs}, device_sets, set_origins)["devices"]
    # a platform's parameters are for its preset: a file or --set naming another preset takes its own
    for role, (preset, keys) in platform_params.items():
        spec = specs.get(role)
        if not isinstance(spec, dict) or spec.get("preset") == preset or not isinstance(spec.get("params"), dict):
            continue
        own = {k.split(".")[3] for k, _ in device_sets if k.startswith(f"devices.{role}.params.")}
        entry = file_devices.get(role)
        if isinstance(entry, dict) and isinstance(entry.get("params"), dict):
            own |= set(entry["params"])
        spec["params"] = {k: v for k, v in spec["params"].items() if k not in keys or k in own}
    # a file or --set naming a device of another family than the platform's takes its own modules and
    # interleaving too (the platform's were that family's)
    for role in needed:
        spec, base = specs.get(role), platform.role_spec(system, role)
        if not isinstance(spec, dict) or not isinstance(base, dict):
            continue
        if str(spec.get("preset", "")).split("/")[0] == str(base.get("preset", "")).split("/")[0]:
            continue
        given = {k.split(".")[2] for k, _ in device_sets if k.startswith(f"devices.{role}.")}
        entry = file_devices.get(role)
        given |= set(entry) if isinstance(entry, dict) else set()
        for key in ("count", "interleave_B"):
            if key in spec and key not in given:
                del spec[key]
    return {role: _device(role, spec, origins) for role, spec in specs.items()}


def check_platform(platform: Platform) -> None:
    """Refuse what a platform file says that no run would read, naming the file and key path: a
    role no system has (``roles.tabel_memory``), a group naming a system the catalog has not
    (``groups[1].systems[0]``: ``sdd`` would leave ``ssd`` on the defaults), and an entry's keys and
    module count that no system could build (``count: 0``), whether or not the system run now uses
    that role."""
    where = platform.path
    known = list_systems()
    layers = [("roles", platform.roles)] + [(f"groups[{i}].roles", r) for i, (_, r) in enumerate(platform.groups)]
    for i, (systems, _) in enumerate(platform.groups):
        for j, system in enumerate(systems):
            if system not in known:
                hint = unknown_key_message(system, known)[len("unknown key"):]
                raise ConfigError(where, f"groups[{i}].systems[{j}]", f"no such system {system!r}{hint} "
                                  f"(known: {', '.join(known)})")
    for kp, roles in layers:
        for role, entry in roles.items():
            if role not in ROLES:
                raise ConfigError(where, f"{kp}.{role}", unknown_key_message(role, ROLES) + f" (roles: {', '.join(ROLES)})")
            if not isinstance(entry, dict):
                continue
            for key in entry:
                if key not in DEVICE_KEYS:
                    raise ConfigError(where, f"{kp}.{role}.{key}", unknown_key_message(key, DEVICE_KEYS))
            if "count" in entry:
                DEVICE_KEYS["count"].coerce(entry["count"], where, f"{kp}.{role}.count")


def _workload_name(value: Any, where: str) -> str:
    """The system's default workload: a catalog name or an existing YAML file."""
    if not isinstance(value, str) or not value:
        raise ConfigError(where, "workload", f"expected a workload name (cxlsim workload lists them) or YAML path, got {value!r}")
    if Path(value).suffix in (".yaml", ".yml"):
        if not Path(value).is_file():
            raise ConfigError(where, "workload", f"{value}: file not found")
        return value
    try:
        workload_path(value)
    except ConfigError as exc:
        raise ConfigError(where, "workload", f"{value}: {exc.message}") from None
    return value


def _mapping(doc: dict[str, Any], key: str, where: str, what: str, prefix: str = "") -> dict[str, Any]:
    """``doc[key]``: a mapping, or ``{}`` when absent or empty (``key:`` with no value); anything
    else (a list, a number, text) is refused naming ``where`` and the key path ``prefix + key``."""
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(where, prefix + key, f"expected {what}, got {type(value).__name__} {value!r:.40}")
    return value


def _value(v: Any) -> Any:
    """``{value: x, source: ...}`` → ``x`` (system files may annotate values with sources)."""
    return v["value"] if isinstance(v, dict) and "value" in v else v


def _ancestors(path: Path, stack: tuple[str, ...]) -> tuple[str, ...]:
    """Names of the systems ``path`` inherits from, nearest first (cycles are refused by
    :func:`_read_with_parents`, which reads the same chain first)."""
    parent = read_yaml(path).get("inherits")
    if not isinstance(parent, str) or not parent or str(path) in stack:
        return ()
    parent_path = system_path(parent)
    name = str(read_yaml(parent_path).get("name", parent_path.stem))
    return (name, *_ancestors(parent_path, stack + (str(path),)))


def _read_with_parents(path: Path, stack: tuple[str, ...], origins: Origins | None = None) -> dict[str, Any]:
    """The document at ``path`` deep-merged over the one it ``inherits:`` (by name or path);
    ``origins`` records which file gave each key."""
    where = str(path)
    if where in stack:
        raise ConfigError(where, "inherits", "inheritance cycle: " + " -> ".join(stack + (where,)))
    doc = read_yaml(path)
    check_version(doc, where)
    if origins is not None:
        origins.add({k: v for k, v in doc.items() if k != "inherits"}, (FILE_RANK, -len(stack)), where)
    parent = doc.pop("inherits", None)
    if parent is None:
        return doc
    if not isinstance(parent, str) or not parent:
        raise ConfigError(where, "inherits", f"expected a system name or YAML path, got {parent!r}")
    try:
        parent_path = system_path(parent)
    except ConfigError as exc:
        raise ConfigError(where, "inherits", exc.message) from None
    base = _read_with_parents(parent_path, stack + (where,), origins)
    base.pop("name", None)
    base.pop("description", None)
    return merge(base, doc)


def _device(role: str, spec: Any, origins: Origins) -> DeviceRole:
    """Role ``role``'s device from its merged entry ``spec``; an error names the input that gave
    the offending value (``origins``)."""
    kp = f"devices.{role}"

    def at(key: str) -> tuple[str, str]:
        return origins.of(f"{kp}.{key}" if key else kp)

    if role not in ROLES:
        raise ConfigError(*at(""), unknown_key_message(role, ROLES) + f" (roles: {', '.join(ROLES)})")
    if isinstance(spec, str):
        spec = {"preset": spec}
    if not isinstance(spec, dict) or "preset" not in spec:
        raise ConfigError(*at(""), "expected {preset: family/name, count: N, ...}")
    for key in spec:
        if key not in DEVICE_KEYS:
            raise ConfigError(*at(str(key)), unknown_key_message(key, DEVICE_KEYS))
    overrides = spec["params"] if spec.get("params") is not None else {}
    if not isinstance(overrides, dict):
        raise ConfigError(*at("params"), f"expected a mapping of parameter: value, got "
                          f"{type(overrides).__name__} {overrides!r:.40}")
    overrides = _flat_parts(overrides)
    name = str(spec["preset"])
    try:
        locate_preset(name)
    except ConfigError as exc:  # no such preset: the key that names it
        raise ConfigError(*at("preset"), exc.message if exc.where == name else f"{exc.where}: {exc.message}") from None
    # each override's origin: an error in one names it; an error of the preset's own names the preset file
    override_at = {k: at(f"params.{k}") for k in overrides}

    def relocate(where: str, key: str) -> tuple[str, str]:  # an override's value: the key that gave it
        name = key.removeprefix("params.")
        given = override_at.get(name) if key.startswith("params.") else None
        return given if given is not None and given[0] == where else (where, key)

    try:
        with relocated_warnings(relocate):
            preset = load_preset(name, overrides, overrides_where={k: w for k, (w, _) in override_at.items()})
    except ConfigError as exc:
        key = exc.key.removeprefix("params.")
        if exc.key.startswith("params.") and key in override_at and exc.where == override_at[key][0]:
            raise ConfigError(*override_at[key], exc.message) from None
        raise
    family = preset.family
    memory = family_kind(family) == MEMORY_KIND
    if not role_takes(role, family):
        takes = ", ".join(t.replace("kind:", "any ") + (" family" if t.startswith("kind:") else "")
                          for t in ROLE_FAMILIES[role])
        raise ConfigError(*at("preset"), f"{preset.name} is a {family} device; the {role} role takes "
                          f"{takes} ({ROLES[role]})")
    if family_kind(family) == CXL_MEMORY_KIND:
        return _behind_cxl(role, preset, spec, at)
    # structural keys take effect only where a model uses them: modules and interleaving for memory
    # roles, switch levels for the switch; anywhere else they would be accepted and change nothing
    for key, applies, what in (("count", memory, "memory modules (roles of a memory-kind family)"),
                               ("interleave_B", memory, "memory modules (roles of a memory-kind family)"),
                               ("levels", role == "switch", "the switch role")):
        if key in spec and not applies:
            raise ConfigError(*at(key), f"applies only to {what}; the {role} role ({preset.name}) has none")
    count = DEVICE_KEYS["count"].coerce(spec.get("count", DEVICE_KEYS["count"].default), *at("count"))
    inter = DEVICE_KEYS["interleave_B"].coerce(spec.get("interleave_B", DEVICE_KEYS["interleave_B"].default),
                                               *at("interleave_B"))
    problem = geometry_problem(preset.params.as_dict(), inter) if memory else None
    if problem is not None:  # unrecorded reads (as_dict): a check, not a model's
        key, message = problem
        culprit = _breaking_override(name, overrides, inter) if key not in overrides else None
        if culprit is not None:  # the preset's values and the interleave agree; this override does not
            raise ConfigError(*at(f"params.{culprit}"), f"{key}: {message} ({preset.name})")
        if key == "interleave_B":
            raise ConfigError(*at("interleave_B"), f"{message} ({preset.name})")
        if key in overrides:
            raise ConfigError(*at(f"params.{key}"), message)
        raise ConfigError(preset.path, f"params.{key}", message)
    levels = DEVICE_KEYS["levels"].coerce(spec.get("levels", DEVICE_KEYS["levels"].default), *at("levels"))
    return DeviceRole(role, preset, count, inter, levels)


def _flat_parts(overrides: dict[str, Any]) -> dict[str, Any]:
    """A composite's part overrides as its keys spell them (``link.params.port_latency_ns``): a
    ``--set devices.R.params.link.params.port_latency_ns=...`` or a nested ``{link: {params: {...}}}``
    arrives nested."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, dict) and set(value) == {"params"} and isinstance(value["params"], dict):
            for sub, v in value["params"].items():
                out[f"{key}.params.{sub}"] = v
        else:
            out[key] = value
    return out


def _behind_cxl(role: str, device: Preset, spec: dict[str, Any], at: Any) -> DeviceRole:
    """A memory role given a CXL memory device: its media's channels, behind the device's link
    (:attr:`DeviceRole.via`). ``count`` devices of the preset (default 1), each on a host root port
    of its own, the role's data spread over them ``interleave_B`` bytes at a time (default a 4 KiB
    page); each device's channels and their interleaving are its preset's ``media_count`` and
    ``media_interleave_B``. A pooled preset (``devices_count`` endpoints behind a switch with as many
    host ports) is one pool a role: its endpoints, interleaved by the pool at ``media_interleave_B``,
    each reached through one host port's share of the traffic (named approximation,
    docs/devices-fabric.md); a pool whose host ports and endpoints differ in number is refused."""
    p = device.params
    ports, endpoints = p["host_ports_count"], p["devices_count"]
    if ports > 1 or endpoints > 1:
        if ports != endpoints:
            raise ConfigError(*at("preset"), f"{device.name}: host_ports_count {ports}, devices_count {endpoints}: "
                              f"a pool is a memory role only with one host port an endpoint")
        for key in ("count", "interleave_B"):
            if key in spec:
                raise ConfigError(*at(key), f"a {role} role given a pooled CXL memory device ({device.name}) holds "
                                  f"one pool: its {endpoints} endpoints are interleaved by the pool at "
                                  f"media_interleave_B")
        count, inter = endpoints, p["media_interleave_B"]
    else:
        count = DEVICE_KEYS["count"].coerce(spec.get("count", 1), *at("count"))
        inter = DEVICE_KEYS["interleave_B"].coerce(spec.get("interleave_B", DEVICE_KEYS["interleave_B"].default),
                                                   *at("interleave_B"))
        if "interleave_B" in spec and count == 1:  # it would be accepted and change nothing
            raise ConfigError(*at("interleave_B"), f"spreads the role's data over several CXL memory devices "
                              f"(count); one device ({device.name}) interleaves its channels at its preset's "
                              f"media_interleave_B")
        if inter % PATH_LINE_B:
            raise ConfigError(*at("interleave_B"), f"{inter}: CXL memory devices are interleaved in whole "
                              f"{PATH_LINE_B} B lines ({device.name})")
    media = get_family(CXL_MEMORY_KIND).build(p).media_preset
    p["device_type"]
    return DeviceRole(role, media, p["media_count"], p["media_interleave_B"], 1, via=device, via_count=count,
                      via_interleave_B=inter)


def _breaking_override(preset: str, overrides: dict[str, Any], interleave: int) -> str | None:
    """The first of ``overrides`` that alone gives ``preset`` a geometry problem with
    ``interleave``, when the preset's own values have none (None otherwise): the value to blame."""
    with warnings.catch_warnings():  # trial loads: the values were checked once as given
        warnings.simplefilter("ignore", PlausibilityWarning)
        try:
            if not overrides or geometry_problem(load_preset(preset).params.as_dict(), interleave) is not None:
                return None
        except ConfigError:  # the preset needs its overrides
            return None
        for key, value in overrides.items():
            try:
                params = load_preset(preset, {key: value}).params
            except ConfigError:
                continue
            if geometry_problem(params.as_dict(), interleave) is not None:
                return key
    return None


def role_takes(role: str, family: str) -> bool:
    """Whether ``role`` takes a device of ``family`` (:data:`ROLE_FAMILIES`)."""
    takes = ROLE_FAMILIES[role]
    return family in takes or f"kind:{family_kind(family)}" in takes


def needed_roles(p: ParamSet) -> list[str]:
    """The device roles a pipeline uses, in a stable order (no duplicates): the GPU, the host, the
    tables' role, then what each axis implementation needs (:mod:`cxlsim.systems.axes`; transport:
    PCIe before the CXL fabric's roles)."""
    scheme = axes.of(p, "persistence")
    need = ["gpu", "host_cpu", p.tables_on] + axes.of(p, "embedding_engine").roles(p)
    transport = axes.of(p, "data_movement").roles(p)
    if scheme.persists:
        transport += axes.of(p, "mlp_pull").roles(p)
    need += sorted(dict.fromkeys(transport), key=lambda r: r != "pcie")
    if scheme.persists:
        need += scheme.roles(p) + axes.of(p, "checkpoint_agent").roles(p)
    if p.vector_cache_GB > 0 or p.table_placement != "single":
        need.append("host_dram")
    return list(dict.fromkeys(need))


def _selected(p: ParamSet) -> dict[str, type | None]:
    """Each axis's implementation class the pipeline runs (None: the axis does not apply)."""
    scheme = axes.of(p, "persistence")
    out: dict[str, type | None] = {axis: None for axis in axes.AXES}
    out.update(persistence=scheme, embedding_engine=axes.of(p, "embedding_engine"),
               data_movement=axes.of(p, "data_movement"))
    if scheme.persists:
        out.update(checkpoint_agent=axes.of(p, "checkpoint_agent"), mlp_pull=axes.of(p, "mlp_pull"))
    if p.relaxed_lookup:
        out["correction"] = axes.of(p, "correction")
    return out


def placement_weights(p: ParamSet) -> tuple[int, int]:
    """``(near, far)`` pages of an interleave period (``table_placement_near_weight``, ``_far_weight``)."""
    return int(p.table_placement_near_weight), int(p.table_placement_far_weight)


def _check_placement(p: ParamSet, where: str) -> None:
    """The placement's own keys apply only to it; a placement over tiers needs the host engine."""
    if p.table_placement != "interleave":
        for key in ("table_placement_near_weight", "table_placement_far_weight"):
            p.skip(key, "only table_placement: interleave reads it")
    if p.table_placement != "hot_first":
        p.skip("table_placement_near_GB", "only table_placement: hot_first reads it")
    if p.table_placement == "single":
        return
    if axes.of(p, "embedding_engine").on_device:
        raise ConfigError(where, "pipeline.table_placement", f"{p.table_placement}: tables placed over host DRAM and "
                          f"the table memory need the host to run the embeddings (embedding_engine "
                          f"{p.embedding_engine} runs on the memory device)")
    if p.vector_cache_GB > 0:
        raise ConfigError(where, "pipeline.table_placement", f"{p.table_placement}: a vector cache in host DRAM and "
                          "tables placed in host DRAM are two uses of one memory; give one (vector_cache_GB: 0)")
    if p.table_placement == "interleave" and sum(placement_weights(p)) == 0:
        raise ConfigError(where, "pipeline.table_placement_near_weight", "interleave: the near and far weights are "
                          "both 0 (no page goes anywhere)")


def _check_roles(cfg: SystemConfig, where: str, platform_file: str = "") -> None:
    """Validate the pipeline against its axis implementations: the selected ones check their
    settings (``check``); the keys only an unselected implementation reads (``KEYS`` and
    ``PARAMS`` of its class) are skipped; then every role the pipeline needs must be there."""
    p = cfg.pipeline
    selected = _selected(p)
    scheme = selected["persistence"]
    scheme.check_pipeline(p, where)
    for axis in axes.AXES:
        for name in axes.names(axis):
            cls = axes.implementation(axis, name)
            if cls is selected[axis]:
                continue
            for key in tuple(getattr(cls, "KEYS", ())) + tuple(prm.name for prm in getattr(cls, "PARAMS", ())):
                if key in p:
                    p.skip(key, f"only {axis}: {name} reads it ({axis} is "
                           f"{getattr(p, axis) if selected[axis] is not None else 'not used here'})")
    if not p.relaxed_lookup:
        p.skip("correction", "no relaxed lookup here, so nothing to correct")
    if not p.vector_cache_GB > 0:
        p.skip("vector_cache_start", "no vector cache here (vector_cache_GB is 0)")
    _check_placement(p, where)
    for axis, cls in selected.items():
        if cls is not None and axis != "persistence" and hasattr(cls, "check_pipeline"):
            cls.check_pipeline(p, where)
    if (p.relaxed_lookup or p.relaxed_mlp_log) and not getattr(scheme, "relaxable", False):
        raise ConfigError(where, "pipeline.relaxed_lookup", "relaxations need the batch-aware undo log (persistence: undo)")
    if p.relaxed_lookup and not selected["embedding_engine"].on_device:
        raise ConfigError(where, "pipeline.relaxed_lookup", "relaxed lookup runs on the near-data logic (embedding_engine: ndp)")
    for role in needed_roles(p):
        if role not in cfg.devices:
            raise ConfigError(where, f"devices.{role}", f"missing: this pipeline needs a {role} ({ROLES[role]}) "
                              f"and neither the system nor platform {cfg.platform!r} ({platform_file}) gives one")

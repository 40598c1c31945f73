"""Characterise one device preset as a LENS/OptaneStudy-style probe would.

Memory and storage presets (dram, pmem, ssd) on --modules M interleaved modules (default 1,
4 KiB interleaving): idle read/write latency (sequential, random); read, non-temporal write and
store + flush bandwidth per access size (64 B ... 4 KiB) from --threads N threads (12 lines in
flight each, 6 for non-temporal stores; default: a saturating requester), --pattern random|sequential; write amplification;
loaded latency (latency vs offered bandwidth, as Intel MLC) and persist latency (stores + fence)
by size; the Little's-law bound of presets with a controller limit. Keys: docs/devices-media.md.
Links and switches: latency_ns and bw_GBps per direction (a saturated direction is a long stream).
CXL memory devices (cxl_mem: link + controller + media, + switch when pooled): MLC-style probes from
a discrete queueing model: idle_latency_ns, loaded_latency [{offered_GBps, achieved_GBps,
latency_ns}], bw_by_mix_GBps (1:0, 3:1, 2:1, 1:1, 0:1), bw_by_threads_GBps, by pattern and stride;
cache_ops for a Type-2 device; --plot F.png draws them; --set link.params.lanes_count=16 overrides
one part's parameter.
GPUs: forward/backward time of an MLP from the timing table, e.g.
  cxlsim microbench gpu/rtx3090 --mlp 13-8192-2048-32 --batch 2048
Host CPUs: a batch's embedding lookup and update run as the simulator runs them, a media stream
with cores × line-fill buffers in flight, on --medium PRESET (default dram/ddr4-2666) × --modules
(default 2). CXL protocols and switches run over links of --link PRESET (default cxl_link/cxl3-x16)
and switches of --switch PRESET (default cxl_switch/cxl3-x16).

Examples:
  cxlsim microbench pmem/optane-100
  cxlsim microbench pmem/paper --json
  cxlsim microbench pmem/optane-100 --threads 8 --modules 6 --pattern random --json
  cxlsim microbench pmem/paper --set write_bw_GBps=2.0
  cxlsim microbench cpu/i5-9600k --medium pmem/optane-100 --modules 6
  cxlsim microbench cxl_protocol/fpga --link cxl_link/cxl2-x16 --switch cxl_switch/cxl2-x16
  cxlsim microbench cxl_mem/e3s-x8-spr --json --plot e3s.png
"""

from __future__ import annotations

import argparse
from typing import Any

from cxlsim.cli._args import figure_path, whole
from cxlsim.config.bounds import MAX_MODULES_PER_ROLE, MAX_OUTSTANDING_REQUESTS
from cxlsim.config.catalog import Preset
from cxlsim.config.yamlio import parse_set
from cxlsim.devices.memory.interleave import geometry_problem
from cxlsim.devices.registry import build_device, family_kind, get_family, load_preset
from cxlsim.errors import ConfigError, InputError
from cxlsim.reports.output import emit, fmt_num
from cxlsim.validate.media_bench import INTERLEAVE_B, THREAD_LINES
from cxlsim.validate.microbench import microbench_of

HELP = "microbenchmark a device preset (latency, bandwidth vs access size, write amplification)"

#: Defaults of the options that name presets (resolved here, never in the models).
DEFAULT_MEDIUM = "dram/ddr4-2666"
DEFAULT_MODULES = 2
DEFAULT_LINK = "cxl_link/cxl3-x16"
DEFAULT_SWITCH = "cxl_switch/cxl3-x16"
#: The host whose software path a PCIe link's copies, launches and synchronisations run on.
DEFAULT_HOST = "cpu/i5-9600k"
#: Most requester threads: their lines in flight (``THREAD_LINES`` each) stay within the bound on
#: accesses in flight from one requester.
MAX_THREADS = MAX_OUTSTANDING_REQUESTS // THREAD_LINES
DEFAULTS = {"medium": DEFAULT_MEDIUM, "link": DEFAULT_LINK, "switch": DEFAULT_SWITCH, "host": DEFAULT_HOST}
#: The kind of family whose microbenchmark takes --threads, --modules (of the preset itself) and
#: --pattern (and whose presets --medium names).
MEDIA_KIND = "memory"
#: Which preset options each family's microbenchmark takes, with the families (or ``kind:<kind>``)
#: each must be of.
PRESET_OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "cpu": {"medium": (f"kind:{MEDIA_KIND}",)},
    "cxl_switch": {"link": ("cxl_link",)},
    "cxl_protocol": {"link": ("cxl_link",), "switch": ("cxl_switch",)},
    "pcie": {"host": ("cpu",)},
    "cxl_mem": {"host": ("cpu",)},
}
#: Per-family defaults of those options, where a family's differs: the CXL memory devices of the
#: catalogue were measured on Sapphire Rapids hosts.
FAMILY_DEFAULTS: dict[str, dict[str, str]] = {"cxl_mem": {"host": "cpu/xeon-gold-6430"}}


def default_of(family: str, key: str) -> str:
    """The preset an option names when not given, for ``family``."""
    return FAMILY_DEFAULTS.get(family, {}).get(key, DEFAULTS[key])


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("preset", nargs="?", help="preset name family/name (or use --config FILE)")
    p.add_argument("--mlp", help="GPU presets: layer widths, e.g. 13-8192-2048-32")
    p.add_argument("--batch", type=whole(1), help="GPU presets: batch size; CPU and near-data logic: batch of 20 × 80 lookups")
    p.add_argument("--medium", help=f"CPU presets: media preset the rows are read from (default {DEFAULT_MEDIUM})")
    p.add_argument("--modules", type=whole(1, MAX_MODULES_PER_ROLE), help=f"media presets: interleaved modules "
                   f"(default 1); CPU presets: interleaved modules of the medium (default {DEFAULT_MODULES})")
    p.add_argument("--threads", type=whole(1, MAX_THREADS), help=f"media presets: requester threads, "
                   f"{THREAD_LINES} lines in flight each, 6 for non-temporal stores, at most {MAX_THREADS:,} "
                   f"({MAX_OUTSTANDING_REQUESTS:,} lines in flight; default: a saturating requester)")
    p.add_argument("--pattern", choices=("random", "sequential"), help="media presets: address pattern of the "
                   "bandwidth sweeps (default random)")
    p.add_argument("--link", help=f"CXL protocol and switch presets: link preset of every link (default {DEFAULT_LINK})")
    p.add_argument("--switch", help=f"CXL protocol presets: switch preset of every switch (default {DEFAULT_SWITCH})")
    p.add_argument("--host", help=f"PCIe presets: the host CPU preset the software path's calls run on "
                   f"(default {DEFAULT_HOST}); CXL memory presets (cxl_mem): the host whose cores' misses load "
                   f"the device (default {FAMILY_DEFAULTS['cxl_mem']['host']})")
    p.add_argument("--plot", metavar="F.png", type=figure_path(), help="CXL memory presets (cxl_mem): draw the MLC-style curves "
                   "(loaded latency, bandwidth by mix and by threads) into F.png")


def _model(option: str, name: str, families: tuple[str, ...]) -> Any:
    try:
        pre = load_preset(name)
    except ConfigError as exc:
        raise InputError(f"--{option} {name}: {exc.message}") from None
    if pre.family not in families and f"kind:{family_kind(pre.family)}" not in families:
        wanted = " or ".join(f.replace("kind:", "any ") + (" kind" if f.startswith("kind:") else "") for f in families)
        raise InputError(f"--{option} {name}: a preset of family {wanted} is needed, not {pre.family}")
    try:
        check_geometry(pre, {})
    except ConfigError as exc:
        raise InputError(f"--{option} {name}: {exc}") from None
    return build_device(name)


def check_geometry(pre: Preset, overrides: dict[str, Any]) -> None:
    """Refuse a media preset the microbenchmarks cannot build (as a system's memory role refuses it,
    :func:`~cxlsim.devices.memory.interleave.geometry_problem`): its unit must divide their
    ``INTERLEAVE_B`` interleaving, its state stay within the bound; naming ``--set`` for a key it
    overrides, else the preset file."""
    if family_kind(pre.family) != MEDIA_KIND:
        return
    problem = geometry_problem(pre.params.as_dict(), INTERLEAVE_B)  # unrecorded: a check, not a model's read
    if problem is not None:
        key, message = problem
        if key == "interleave_B":
            key, message = "access_unit_B", f"{message} (the microbenchmarks interleave modules every {INTERLEAVE_B} B)"
        raise ConfigError("--set" if key in overrides else pre.path, f"params.{key}", message)


def options_for(family: str, args: argparse.Namespace) -> dict[str, Any]:
    """The microbenchmark options of ``family``: plain values, and the models the preset options
    name (built here, with their defaults)."""
    opts: dict[str, Any] = {"mlp": args.mlp, "batch": args.batch}
    wanted = PRESET_OPTIONS.get(family, {})
    given = {k: getattr(args, k) for k in DEFAULTS if getattr(args, k, None)}
    for key in given:
        if key not in wanted:
            raise InputError(f"--{key}: family {family} takes no such option")
    media = family_kind(family) == MEDIA_KIND
    if args.modules is not None and "medium" not in wanted and not media:
        raise InputError(f"--modules: family {family} takes no such option")
    for key in ("threads", "pattern"):
        if getattr(args, key, None) is not None and not media:
            raise InputError(f"--{key}: family {family} takes no such option")
    if media:
        for key in ("threads", "modules"):
            value = getattr(args, key, None)
            if value is not None and value < 1:
                raise InputError(f"--{key}: must be >= 1, got {value}")
        opts.update(threads=args.threads, modules=args.modules or 1, pattern=args.pattern or "random")
    for key, families in wanted.items():
        opts[key] = _model(key, given.get(key, default_of(family, key)), families)
    if "medium" in wanted:
        modules = DEFAULT_MODULES if args.modules is None else args.modules
        if modules < 1:
            raise InputError(f"--modules: must be >= 1, got {modules}")
        opts["modules"] = modules
    return opts


def run(args: argparse.Namespace) -> int:
    target = args.config or args.preset
    if not target:
        raise InputError("microbench: name a preset (e.g. pmem/optane-100) or give --config FILE")
    overrides = dict(parse_set(args.set))
    pre = load_preset(target, overrides)
    check_geometry(pre, overrides)
    family = get_family(pre.family)
    bench = microbench_of(family)
    if bench is None:
        raise InputError(f"{pre.name}: family {pre.family} has no microbenchmark")
    model = family.build(pre.params)
    options = options_for(pre.family, args)
    result = {"device": pre.name, **{k: options[k] for k in ("modules",) if k in options}}
    for key in PRESET_OPTIONS.get(pre.family, {}):
        result[key] = getattr(args, key) or default_of(pre.family, key)
    result.update(bench(model, options))
    if getattr(args, "plot", None):
        if "loaded_latency" not in result:
            raise InputError(f"--plot: family {pre.family} draws no curves (cxl_mem presets do)")
        result["plot"] = plot_mlc(result, args.plot)
    emit(args, result, render_result)
    return 0


def plot_mlc(d: dict, path: str) -> str:
    """Draw a ``cxl_mem`` preset's MLC-style curves into ``path`` (PNG): loaded latency against
    achieved bandwidth, bandwidth by read:write mix, bandwidth by threads."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    rows = d["loaded_latency"]
    axes[0].plot([r["achieved_GBps"] for r in rows], [r["latency_ns"] for r in rows], "o-")
    axes[0].set(xlabel="achieved bandwidth (GB/s)", ylabel="probe latency (ns)", title="loaded latency")
    mix = d["bw_by_mix_GBps"]
    axes[1].bar(list(mix), list(mix.values()))
    axes[1].set(xlabel="reads : writes", ylabel="GB/s", title="bandwidth by mix")
    thr = d["bw_by_threads_GBps"]
    axes[2].plot([int(k) for k in thr], list(thr.values()), "o-")
    axes[2].set(xscale="log", xlabel="threads", ylabel="GB/s", title="bandwidth by threads")
    fig.suptitle(d["device"])
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def render_result(d: dict) -> str:
    lines = [f"microbenchmark of {d['device']}"]
    for key, value in d.items():
        if key == "device":
            continue
        if isinstance(value, list):
            lines.append(f"  {key}")
            lines.extend("    " + ", ".join(f"{k}: {fmt_num(v)}" for k, v in row.items()) for row in value)
        elif value is None:
            lines.append(f"  {key:<22} -")
        elif isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            lines.append(f"  {key}")  # a table: one line per entry (e.g. cache_ops: op -> bw, latency)
            for k, v in value.items():
                inner = ", ".join(f"{kk}: {fmt_num(vv)}" for kk, vv in v.items()) if isinstance(v, dict) else fmt_num(v)
                lines.append(f"    {k:<20} {inner}")
        elif isinstance(value, dict):
            lines.append(f"  {key:<22} " + ", ".join(f"{k}: {fmt_num(v)}" for k, v in value.items()))
        else:
            lines.append(f"  {key:<22} {fmt_num(value)}")
    return "\n".join(lines)

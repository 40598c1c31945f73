"""Measure an MLP timing table on a CUDA GPU with PyTorch (optional; needs torch with CUDA).

    python -m cxlsim.devices.gpu_measure --preset gpu/rtx3090 --out devices/gpu/rtx3090_mlp_measured.csv

Times one ``nn.Linear`` + ReLU per (shape, batch) of the generator's grid (or ``--batches``), fp32,
TF32 disabled: forward = the layer's kernels; backward = ``autograd.backward`` of their output with
the input requiring grad (dX, dW, bias grad, activation grad). A point is the **sum of the kernels'
GPU times** (torch.profiler, CUDA activity) -- kernel times only, as the generated table since model
version 3: the launch latency and the host's dispatch are the step model's
(:mod:`cxlsim.devices.gpu_step`) -- the median of ``--repeat`` runs after ``--warmup``, in ns.
Roofline columns come from the preset's model. Drop the CSV into ``devices/gpu/`` (or a
``$CXLSIM_PATH`` catalog's ``devices/gpu/``) as ``<mlp_table_name>_mlp_measured.csv``; it then takes
precedence over the generated table. Not imported by the simulator; torch is imported in main().
Not yet run on hardware in this repository.
"""

from __future__ import annotations

import argparse
import statistics


def main(argv: list[str] | None = None) -> int:
    try:
        import torch
    except ImportError:
        raise SystemExit("gpu_measure: needs PyTorch with CUDA (pip install torch)") from None

    from cxlsim.devices import build_device
    from cxlsim.devices.gpu import roofline_total_ns
    from cxlsim.devices.gpu_table import BATCH_GRID, table_shapes, write_table
    from cxlsim.version import __version__

    ap = argparse.ArgumentParser(prog="python -m cxlsim.devices.gpu_measure", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="gpu/rtx3090", help="preset whose model gives the roofline columns")
    ap.add_argument("--out", required=True, help="output CSV path")
    ap.add_argument("--batches", help="comma-separated batch sizes (default: the generator's grid)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("gpu_measure: no CUDA device visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    model = build_device(args.preset)
    batches = [int(b) for b in args.batches.split(",")] if args.batches else list(BATCH_GRID)

    def kernel_ns(prof) -> float:
        """Sum of the GPU kernels' self times of one profiled run, ns (profiler times are in us;
        the attribute is ``self_device_time_total`` in recent torch, ``self_cuda_time_total`` before)."""
        total = 0.0
        for e in prof.key_averages():
            t = getattr(e, "self_device_time_total", None)
            total += t if t is not None else e.self_cuda_time_total
        return total * 1e3

    def timed(fn, setup=None) -> float:
        """Median kernel time (ns) of ``fn(setup())``; ``setup`` runs unprofiled before each sample."""
        from torch.profiler import ProfilerActivity, profile

        samples = []
        for i in range(args.warmup + args.repeat):
            state = setup() if setup else None
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn(state)
                torch.cuda.synchronize()
            if i >= args.warmup:
                samples.append(kernel_ns(prof))
        return statistics.median(samples)

    rows = []
    for n_in, n_out in table_shapes():
        layer = torch.nn.Linear(n_in, n_out).to(dev)
        for b in batches:
            x = torch.randn(b, n_in, device=dev, requires_grad=True)
            grad = torch.randn(b, n_out, device=dev)
            fwd = timed(lambda _: torch.relu(layer(x)))  # noqa: B023 (called immediately)
            bwd = timed(lambda y: y.backward(grad), setup=lambda: torch.relu(layer(x)))  # noqa: B023
            layer.zero_grad(set_to_none=True)
            rows.append({
                "layer_in": n_in, "layer_out": n_out, "batch": b, "fwd_ns": fwd, "bwd_ns": bwd,
                "roofline_fwd_ns": roofline_total_ns(model.layer_kernels(n_in, n_out, b, "forward")),
                "roofline_bwd_ns": roofline_total_ns(model.layer_kernels(n_in, n_out, b, "backward")),
            })
        print(f"measured {n_in}x{n_out}", flush=True)
    header = [
        f"MLP timing table measured on {torch.cuda.get_device_name(0)} by: python -m cxlsim.devices.gpu_measure",
        f"cxlsim {__version__}, torch {torch.__version__}, fp32 (TF32 off), kernel times only (torch.profiler), median of {args.repeat} runs",
        "roofline columns from " + args.preset,
    ]
    write_table(args.out, rows, header)
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

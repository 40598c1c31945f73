"""Measure an MLP timing table on a CUDA GPU with PyTorch (optional; needs torch with CUDA).

    python -m cxlsim.calibrate.gpu_measure --preset gpu/rtx3090 --out devices/gpu/rtx3090_mlp_measured.csv

Times one ``nn.Linear`` + ReLU per (shape, batch) of the generator's grid (or ``--batches``), fp32,
TF32 disabled: forward = the layer's kernels; backward = ``autograd.backward`` of their output with
the input requiring grad (dX, dW, bias grad, activation grad). A point is the **sum of the kernels'
GPU times** (torch.profiler, CUDA activity) -- kernel times only, as the generated table since model
version 3: the launch latency and the host's dispatch are the step model's
(:mod:`cxlsim.devices.compute.gpu_step`) -- the median of ``--repeat`` runs after ``--warmup``, in ns.
Roofline columns come from the preset's model. Drop the CSV into ``devices/gpu/`` (or a
``$CXLSIM_PATH`` catalog's ``devices/gpu/``) as ``<mlp_table_name>_mlp_measured.csv``; it then takes
precedence over the generated table. Not imported by the simulator; torch is imported in main().
``--method graph`` times CUDA-graph replays of ``--repeat`` copies instead (where the profiler cannot
see the GPU; it includes the graph's inter-kernel gaps). Run on one H200 on 2026-11-26: the preset
``gpu/h200-sxm``'s measured table (``docs/validation.md``, "The GPU model against a real GPU").
"""

from __future__ import annotations

import argparse
import statistics


def main(argv: list[str] | None = None) -> int:
    try:
        import torch
    except ImportError:
        raise SystemExit("gpu_measure: needs PyTorch with CUDA (pip install torch)") from None

    from cxlsim.calibrate.gpu_table import write_table
    from cxlsim.devices import build_device
    from cxlsim.devices.compute.gpu import roofline_total_ns
    from cxlsim.devices.compute.gpu_table import BATCH_GRID, table_shapes
    from cxlsim.version import __version__

    ap = argparse.ArgumentParser(prog="python -m cxlsim.calibrate.gpu_measure", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="gpu/rtx3090", help="preset whose model gives the roofline columns")
    ap.add_argument("--out", required=True, help="output CSV path")
    ap.add_argument("--batches", help="comma-separated batch sizes (default: the generator's grid)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--method", choices=("profiler", "graph"), default="profiler",
                    help="profiler: sum of kernel times (CUPTI; default); graph: CUDA-event time of a captured "
                         "CUDA graph of --repeat copies (includes the graph's inter-kernel gaps; where CUPTI is absent)")
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

    def graph_timed(fn, setup=None) -> float:
        """Time (ns) per copy of ``fn(setup())`` from a CUDA graph of ``--repeat`` copies, median of 5 replays
        (a backward needs its forward: with ``setup`` the graph holds setup + fn, and setup's time is subtracted)."""
        def body(with_fn: bool):
            state = setup() if setup else None
            if with_fn:
                fn(state)

        def per_copy(with_fn: bool) -> float:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(max(args.warmup, 1)):
                    body(with_fn)
                    layer.zero_grad(set_to_none=True)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(args.repeat):
                    layer.zero_grad(set_to_none=True)
                    x.grad = None
                    body(with_fn)
            samples = []
            for _ in range(6):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                graph.replay()
                b.record()
                b.synchronize()
                samples.append(a.elapsed_time(b) * 1e6 / args.repeat)
            return statistics.median(samples[1:])

        whole = per_copy(True)
        return whole - per_copy(False) if setup else whole

    def timed(fn, setup=None) -> float:
        """Median kernel time (ns) of ``fn(setup())``; ``setup`` runs unprofiled before each sample."""
        if args.method == "graph":
            return graph_timed(fn, setup)
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

    header = [
        f"MLP timing table measured on {torch.cuda.get_device_name(0)} by: python -m cxlsim.calibrate.gpu_measure",
        f"cxlsim {__version__}, torch {torch.__version__}, fp32 (TF32 off), "
        + (f"kernel times only (torch.profiler), median of {args.repeat} runs" if args.method == "profiler" else
           f"CUDA-graph replay time of {args.repeat} copies, median of 5 replays (inter-kernel gaps included)"),
        "roofline columns from " + args.preset,
    ]
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
        write_table(args.out, rows, header)  # after every shape: an interrupted run keeps what it measured
        print(f"measured {n_in}x{n_out}", flush=True)
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

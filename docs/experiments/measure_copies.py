"""Measure host <-> GPU copies vs transfer size with PyTorch (as CUDA's bandwidthTest does), for the
host link's fixed per-call cost and its ramp (the DMA-engine validation; [della-a100] has the
published A100 curves).

    python docs/experiments/measure_copies.py --out copies.json

Per size (4 KiB to 1 GiB) and direction (host -> GPU, GPU -> host) and host memory (pinned,
pageable): the median over ``--repeat`` copies of one synchronous ``Tensor.copy_`` timed with CUDA
events around it (the copy engine's time plus the call's issue on the stream), after ``--warmup``
copies; plus the wall-clock time of a synchronous 4-byte copy (the per-call cost a host pays).
Bandwidth is size / time in GB/s (1e9 B/s). Needs torch with CUDA; not imported by cxlsim.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def main() -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--max-size-B", type=int, default=1 << 30)
    a = ap.parse_args()
    dev = torch.device("cuda")
    sizes = [4096 * 4 ** k for k in range(12) if 4096 * 4 ** k <= a.max_size_B]
    sizes += [10 ** 6, 10 ** 7, 10 ** 8, 10 ** 9]
    sizes = sorted(s for s in set(sizes) if s <= a.max_size_B)
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "repeat": a.repeat,
           "warmup": a.warmup, "unit": {"size": "B", "time": "us", "bw": "GB/s (1e9 B/s)"}, "curves": []}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for pinned in (True, False):
        for size in sizes:
            host = torch.empty(size, dtype=torch.uint8, pin_memory=pinned)
            host.fill_(1)
            gpu = torch.empty(size, dtype=torch.uint8, device=dev)
            for name, dst, src in (("h2d", gpu, host), ("d2h", host, gpu)):
                times = []
                reps = a.repeat if size < 1 << 28 else max(3, a.repeat // 4)
                for r in range(a.warmup + reps):
                    torch.cuda.synchronize()
                    start.record()
                    dst.copy_(src, non_blocking=False)
                    end.record()
                    end.synchronize()
                    if r >= a.warmup:
                        times.append(start.elapsed_time(end) * 1e3)  # us
                med = statistics.median(times)
                out["curves"].append({"direction": name, "pinned": pinned, "size_B": size, "time_us": med,
                                      "min_us": min(times), "max_us": max(times), "bw_GBps": size / (med * 1e3)})
                print(name, "pinned" if pinned else "pageable", size, round(med, 2), "us",
                      round(size / (med * 1e3), 2), "GB/s", flush=True)
            del host, gpu
    small = torch.empty(1, dtype=torch.int32, pin_memory=True)
    g = torch.empty(1, dtype=torch.int32, device=dev)
    for name, dst, src in (("h2d", g, small), ("d2h", small, g)):
        for _ in range(50):
            dst.copy_(src)
        torch.cuda.synchronize()
        n = 2000
        t = time.perf_counter()
        for _ in range(n):
            dst.copy_(src)
            torch.cuda.synchronize()
        out[f"call_{name}_4B_us"] = (time.perf_counter() - t) / n * 1e6
        print(name, "4 B synchronous copy + sync, wall", round(out[f"call_{name}_4B_us"], 2), "us", flush=True)
    json.dump(out, open(a.out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The peer of newton_bench: the fused FlashGRU forward of the paper's public code (apple/ml-pararnn,
torch op parallel_reduce_cuda::fused_fwd_gru_diag_mh), timed at newton_bench's shapes.

Nothing of that code is copied here: the script loads its compiled extension from a path given on the
command line (a built checkout or an installed package directory holding *parallel_reduce_cuda*.so) and
calls the op through torch.ops. The op takes the diagonal parameters A [units, 3] and the input
projections Bx + b as [B, units, T, 3] (same dtype, a 4-dimensional tensor: batched) and returns h
[B, units, T]. Bandwidth as newton_bench counts it: three input values per element read and h written.
Timing: CUDA events, warm-up, the median of --runs calls, each after a read of twice the L2 (as
newton_bench). Prints a table and writes CSV.

  python newton_peer.py --pararnn PATH [--dtypes fp32,bf16] [--shapes B:D:T,...] [--runs N] [--csv FILE]
"""

import argparse
import csv
import glob
import os
import statistics
import sys

import torch

DEFAULT_SHAPES = "32:2048:512,32:2048:2048,32:2048:8192,1:256:65536"


def load_peer(path):
    candidates = sorted(glob.glob(os.path.join(path, "**", "*parallel_reduce_cuda*.so"), recursive=True))
    if not candidates:
        sys.exit(f"newton_peer: no *parallel_reduce_cuda*.so under {path} (build ml-pararnn's extension first)")
    sys.path.insert(0, path)
    torch.ops.load_library(candidates[0])
    return torch.ops.parallel_reduce_cuda.fused_fwd_gru_diag_mh, candidates[0]


def time_ms(call, runs, flush):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        call()
    times = []
    for _ in range(runs):
        flush.add_(1)  # untimed: evicts the previous call's data from L2
        start.record()
        call()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pararnn", required=True, help="ml-pararnn checkout or package directory (built)")
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help="B:D:T,...")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--csv", default="newton_peer.csv")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("newton_peer: needs a CUDA device")
    op, library = load_peer(args.pararnn)
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * getattr(props, "L2_cache_size", 50 << 20) // 4, device="cuda")
    nbytes = 1 << 30
    a, b = torch.empty(nbytes, dtype=torch.uint8, device="cuda"), torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    copy_gbps = 2 * nbytes / (time_ms(lambda: b.copy_(a), args.runs, flush) * 1e6)
    del a, b
    print(f"device: {props.name}, copy bandwidth {copy_gbps:.0f} GB/s, peer {library}")
    print(f"{'op':<24} {'dtype':<5} {'B':>3} {'D':>5} {'T':>6} | {'ms':>9} {'GB/s':>7} {'%copy':>6}")
    rows = []
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    for name in args.dtypes.split(","):
        dtype = dtypes[name]
        for shape in args.shapes.split(","):
            batch, units, steps = (int(v) for v in shape.split(":"))
            torch.manual_seed(0)
            A = (torch.rand(units, 3, device="cuda") - 0.5).to(dtype)
            Bx = (2 * torch.rand(batch, units, steps, 3, device="cuda") - 1).to(dtype)
            ms = time_ms(lambda: op(A, Bx), args.runs, flush)
            counted = batch * units * steps * 4 * Bx.element_size()
            gbps = counted / (ms * 1e6)
            print(f"{'fused_fwd_gru_diag_mh':<24} {name:<5} {batch:>3} {units:>5} {steps:>6} | {ms:9.3f} {gbps:7.0f} "
                  f"{100 * gbps / copy_gbps:5.1f}%", flush=True)
            rows.append(dict(op="fused_fwd_gru_diag_mh", dtype=name, batch=batch, units=units, steps=steps,
                             ms=ms, gbps=gbps, copy_gbps=copy_gbps))
            del A, Bx
            torch.cuda.empty_cache()
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["op"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()

"""The peers of the scan benchmark (examples/bench/scan_bench): torch.add and a device copy on the same
shapes, timed like the scans (CUDA events, warm-up, median). --timing stream: calls enqueued back to
back, each after an untimed read of twice the L2's size, the GPU's time measured; --timing steady: all
calls back to back between two events, no flush; --timing isolated: the host waits for each call.
torch.add reads two tensors and writes one, like linrec's forward: its bandwidth is what a
memory-bound scan should reach.

    python3 examples/bench/scan_peer.py [--rows 13200] [--lengths 16,64,...] [--timing stream|steady|isolated]
                                        [--csv scan_peer.csv]
"""
import argparse
import csv

import torch


def stream_median_ms(fn, flush, runs=20, warmup=3):
    for _ in range(warmup):
        flush()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for start, stop in zip(starts, stops):
        flush()
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(stop) for start, stop in zip(starts, stops))
    return times[len(times) // 2]


def steady_ms(fn, runs=20, warmup=3):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(runs):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / runs


def median_ms(fn, runs=20, warmup=3):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=132 * 100)
    parser.add_argument("--lengths", default="16,64,256,1024,4096,16384,65536")
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--timing", choices=("stream", "steady", "isolated"), default="stream")
    parser.add_argument("--csv", default="scan_peer.csv")
    args = parser.parse_args()
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    flush_buffer = torch.zeros(max(2 * l2_bytes, 1 << 20) // 4, device="cuda", dtype=torch.int32)

    def time_ms(fn):
        if args.timing == "isolated":
            return median_ms(fn)
        if args.timing == "steady":
            return steady_ms(fn)
        return stream_median_ms(fn, lambda: flush_buffer.sum())
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    out = []
    print(f"device: {torch.cuda.get_device_name()}, rows {args.rows}, timing {args.timing}")
    print(f"{'peer':<10} {'dtype':<5} {'L':>8} {'ms':>10} {'GB/s':>9}")
    for name in args.dtypes.split(","):
        dtype = dtypes[name]
        for length in (int(v) for v in args.lengths.split(",")):
            a = torch.rand(args.rows, length, device="cuda", dtype=dtype)
            b = torch.rand_like(a)
            c = torch.empty_like(a)
            nbytes = a.numel() * a.element_size()
            for peer, fn, tensors in (("torch.add", lambda: torch.add(a, b, out=c), 3),
                                      ("copy", lambda: c.copy_(a), 2)):
                ms = time_ms(fn)
                gbps = tensors * nbytes / (ms * 1e6)
                print(f"{peer:<10} {name:<5} {length:>8} {ms:>10.4f} {gbps:>9.0f}")
                out.append({"peer": peer, "dtype": name, "length": length, "rows": args.rows, "ms": ms, "gbps": gbps,
                            "timing": args.timing})
            del a, b, c
            torch.cuda.empty_cache()
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        writer.writeheader()
        writer.writerows(out)
    print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()

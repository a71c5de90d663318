"""The peer of FlashRNN's LSTM benchmarks: torch.nn.LSTM (cuDNN) at the same shapes, and the device's
measured limits (copy bandwidth, bf16 matrix-product rate). Medians of CUDA-event timings after a warm-up.

    python3 examples/bench/torch_lstm_bench.py [--steps 1024] [--runs 15] [--csv FILE] [--quick]

cuDNN has no heads: its hidden size is NH * DH and its recurrent matrix is dense (NH times the work of
FlashRNN's block-diagonal one). It also applies the input projection W x itself (input size = hidden size
here), which FlashRNN takes precomputed: a large efficient GEMM, a small part of the time.
"""
import argparse
import statistics

import torch


def median_ms(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def device_limits(runs):
    n = 1 << 28  # 512 MiB of bf16 per buffer
    a = torch.empty(n, dtype=torch.bfloat16, device="cuda").uniform_()
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a), 3, runs)
    m = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    mm_ms = median_ms(lambda: m @ m, 3, runs)
    return 2 * a.numel() * 2 / copy_ms / 1e9, 2 * 8192**3 / mm_ms / 1e9  # TB/s, TFLOP/s


def lstm_times(batch, hidden, steps, dtype, runs):
    lstm = torch.nn.LSTM(hidden, hidden, device="cuda", dtype=dtype)
    x = torch.randn(steps, batch, hidden, device="cuda", dtype=dtype, requires_grad=True)
    with torch.no_grad():
        fw = median_ms(lambda: lstm(x), 3, runs)

    def training():
        y, _ = lstm(x)
        y.backward(torch.ones_like(y))

    return fw, median_ms(training, 2, runs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--csv")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    copy_tbs, mm_tflops = device_limits(args.runs)
    print(f"device: {torch.cuda.get_device_name()}, copy {copy_tbs:.2f} TB/s (read+write), "
          f"bf16 matmul 8192^3 {mm_tflops:.0f} TFLOP/s, cuDNN {torch.backends.cudnn.version()}")
    shapes = [(16, nh, dh) for nh, dh in [(48, 16), (24, 32), (12, 64), (6, 128), (3, 256), (1, 768)]]
    if not args.quick:
        shapes += [(b, nh, dh) for b in (2, 4, 8, 32, 64, 128, 256) for nh, dh in [(12, 64), (1, 768)]]
    hidden_sizes = sorted({nh * dh for _, nh, dh in shapes})
    batches = sorted({b for b, _, _ in shapes})
    rows = []
    print(f"torch.nn.LSTM (cuDNN), T={args.steps}, hidden = NH * DH, median of {args.runs}")
    print(f"{'B':>5} {'hidden':>6} | {'bf16 fw':>8} {'bf16 fw+bw':>10} | {'fp16 fw':>8} {'fp16 fw+bw':>10}")
    for batch in batches:
        for hidden in hidden_sizes:
            if (batch, hidden) not in {(b, nh * dh) for b, nh, dh in shapes}:
                continue
            bf = lstm_times(batch, hidden, args.steps, torch.bfloat16, args.runs)
            hf = lstm_times(batch, hidden, args.steps, torch.float16, args.runs)
            rows.append((batch, hidden) + bf + hf)
            print(f"{batch:>5} {hidden:>6} | {bf[0]:8.3f} {bf[1]:10.3f} | {hf[0]:8.3f} {hf[1]:10.3f}", flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(f"# copy_tbs={copy_tbs:.3f} matmul_tflops={mm_tflops:.1f}\n")
            f.write("B,hidden,bf16_fw_ms,bf16_fwbw_ms,fp16_fw_ms,fp16_fwbw_ms\n")
            for row in rows:
                f.write(",".join(str(v) if isinstance(v, int) else f"{v:.4f}" for v in row) + "\n")


if __name__ == "__main__":
    main()

"""The peer of newton_bench: the fused FlashGRU of the paper's public code (apple/ml-pararnn), timed at
newton_bench's shapes, and (--ours) one table of ours against it.

Nothing of that code is copied here: the script loads its compiled extension from a path given on the
command line (a built checkout holding *parallel_reduce_cuda*.so; examples/bench/prepare_pararnn.sh builds
one on the CPU machine for the GPU machine's Python) and calls it through torch.ops and its own modules. Timed:
  - fused_fwd_gru_diag_mh, its fused forward op: the diagonal parameters A [units, 3] and the input
    projections Bx + b as [B, units, T, 3] in, h [B, units, T] out. Bandwidth as newton_bench counts it:
    three input values per element read and h written.
  - with --module: its module GRUDiagMH in mode parallel_FUSED, forward+backward (its block-diagonal input
    projection of --module-heads heads included, as the module has it), and its two fused ops alone,
    forward then backward (fused_bwd_gru_diag_mh: the adjoint recurrence, without the module's gradients
    of the parameters and inputs that follow it).
  - with --mamba: Mamba's selective scan (mamba_ssm.selective_scan_fn, d_state 16, forward and
    forward+backward) at the same shapes when the package is installed; else it says so.
With --ours FILE (newton_bench's CSV of the same run) it prints ours (fused forward; fused forward+backward,
whose backward is the unfused one) against the peer, ratio peer / ours.
Timing: CUDA events, warm-up, the median of --runs calls, each after a read of twice the L2 (as
newton_bench). Prints the tables and writes CSV.

  python newton_peer.py --pararnn PATH [--dtypes fp32,bf16] [--shapes B:D:T,...] [--runs N] [--csv FILE]
                        [--module] [--module-heads H] [--mamba] [--ours newton_bench.csv]
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
    # The shallowest first: the checkout's own copy (setup.py build_ext --inplace), which the peer's package
    # loads too; a second copy of the library (build/lib...) would register its op namespace twice.
    candidates = sorted(glob.glob(os.path.join(path, "**", "*parallel_reduce_cuda*.so"), recursive=True),
                        key=lambda p: (p.count(os.sep), p))
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
    parser.add_argument("--module", action="store_true", help="also the module's and the ops' forward+backward")
    parser.add_argument("--module-heads", type=int, default=32, help="heads of the module's input projection")
    parser.add_argument("--mamba", action="store_true", help="also Mamba's selective scan, if installed")
    parser.add_argument("--ours", help="newton_bench's CSV of the same run: print ours against the peer")
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
    if args.module:
        rows += time_module(args, dtypes, flush)
    if args.mamba:
        rows += time_mamba(args, dtypes, flush)
    fieldnames = list(dict.fromkeys(key for row in rows for key in row))  # every row's keys, in order
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fieldnames or ["op"], restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.csv}")
    if args.ours:
        print_against_ours(args.ours, rows)


def shapes_of(args):
    return [tuple(int(v) for v in shape.split(":")) for shape in args.shapes.split(",")]


# The peer's module configuration declares `newton_config: NewtonConfig = NewtonConfig()`, a dataclass
# field whose default is an instance of another (unhashable) dataclass: Python 3.11 and later refuse it
# ("mutable default ... use default_factory") when the module is imported, before any kernel runs.
MUTABLE_DEFAULT = "newton_config: NewtonConfig = NewtonConfig()"
FACTORY_DEFAULT = "newton_config: NewtonConfig = dataclasses.field(default_factory=NewtonConfig)"


def prepare_module_for_python_311(checkout):
    """Rewrites that one default of the peer's checkout (its kernels and everything else unchanged)."""
    utils = os.path.join(checkout, "pararnn", "rnn_cell", "rnn_cell_utils.py")
    with open(utils) as f:
        text = f.read()
    if MUTABLE_DEFAULT in text:
        if "import dataclasses" not in text:
            sys.exit(f"newton_peer: {utils} does not import dataclasses; cannot rewrite its default")
        with open(utils, "w") as f:
            f.write(text.replace(MUTABLE_DEFAULT, FACTORY_DEFAULT))
        print(f"newton_peer: {utils}: newton_config's default made a default_factory (Python 3.11+)")


def time_module(args, dtypes, flush):
    """The peer's module forward+backward and its fused forward and backward ops alone."""
    prepare_module_for_python_311(args.pararnn)
    from pararnn.rnn_cell.gru_diag_mh import GRUDiagMH, GRUDiagMHConfig

    fwd = torch.ops.parallel_reduce_cuda.fused_fwd_gru_diag_mh
    bwd = torch.ops.parallel_reduce_cuda.fused_bwd_gru_diag_mh
    rows = []
    print(f"{'op':<24} {'dtype':<5} {'B':>3} {'D':>5} {'T':>6} | {'ms':>9}")
    for name in args.dtypes.split(","):
        dtype = dtypes[name]
        for batch, units, steps in shapes_of(args):
            torch.manual_seed(0)
            model = GRUDiagMH(GRUDiagMHConfig(state_dim=units, input_dim=units, device=torch.device("cuda"),
                                              dtype=dtype, mode="parallel_FUSED", num_heads=args.module_heads))
            x = (2 * torch.rand(batch, steps, units, device="cuda") - 1).to(dtype)
            grad = torch.rand(batch, steps, units, device="cuda").to(dtype)

            def module_step():
                model.zero_grad(set_to_none=True)
                model(x).backward(grad)

            A = (torch.rand(units, 3, device="cuda") - 0.5).to(dtype)
            Bx = (2 * torch.rand(batch, units, steps, 3, device="cuda") - 1).to(dtype)
            gradient = torch.rand(batch, units, steps, device="cuda").to(dtype)

            def ops_step():
                h = fwd(A, Bx)
                bwd(gradient, h, A, Bx)

            for op, call in (("module fw+bw", module_step), ("fused ops fw+bw", ops_step)):
                ms = time_ms(call, args.runs, flush)
                print(f"{op:<24} {name:<5} {batch:>3} {units:>5} {steps:>6} | {ms:9.3f}", flush=True)
                rows.append(dict(op=op, dtype=name, batch=batch, units=units, steps=steps, ms=ms,
                                 heads=args.module_heads))
            del model, x, grad, A, Bx, gradient
            torch.cuda.empty_cache()
    return rows


def time_mamba(args, dtypes, flush):
    """Mamba's selective scan at the same shapes (d_state 16), when mamba_ssm is installed."""
    try:
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
    except ImportError as error:
        print(f"mamba_ssm: not installed on this device ({error}); no selective-scan timings")
        return []
    rows = []
    for name in args.dtypes.split(","):
        dtype = dtypes[name]
        for batch, units, steps in shapes_of(args):
            u = torch.randn(batch, units, steps, device="cuda", dtype=dtype, requires_grad=True)
            delta = torch.rand(batch, units, steps, device="cuda", dtype=dtype, requires_grad=True)
            A = -torch.rand(units, 16, device="cuda", requires_grad=True)
            B = torch.randn(batch, 16, steps, device="cuda", dtype=dtype, requires_grad=True)
            C = torch.randn(batch, 16, steps, device="cuda", dtype=dtype, requires_grad=True)
            D = torch.ones(units, device="cuda", requires_grad=True)
            grad = torch.ones(batch, units, steps, device="cuda", dtype=dtype)
            forward = lambda: selective_scan_fn(u, delta, A, B, C, D, delta_softplus=True)  # noqa: E731
            forward_ms = time_ms(lambda: forward().detach(), args.runs, flush)
            total_ms = time_ms(lambda: forward().backward(grad), args.runs, flush)
            print(f"{'mamba selective_scan':<24} {name:<5} {batch:>3} {units:>5} {steps:>6} | fw {forward_ms:9.3f}"
                  f" fw+bw {total_ms:9.3f}", flush=True)
            rows.append(dict(op="mamba selective_scan fw", dtype=name, batch=batch, units=units, steps=steps,
                             ms=forward_ms))
            rows.append(dict(op="mamba selective_scan fw+bw", dtype=name, batch=batch, units=units, steps=steps,
                             ms=total_ms))
            del u, delta, A, B, C, D, grad
            torch.cuda.empty_cache()
    return rows


def print_against_ours(path, rows):
    """Ours (newton_bench's fused FlashGRU rows) against the peer's rows of the same shape and dtype."""
    with open(path) as f:
        ours = [r for r in csv.DictReader(f) if r["cell"] == "flash_gru"]
    peer = {(r["op"], r["dtype"], int(r["batch"]), int(r["units"]), int(r["steps"])): r["ms"] for r in rows}
    print("\nFlashGRU, ours (fused) against the peer, ms (ratio: peer / ours)")
    print(f"{'dtype':<5} {'B':>3} {'D':>5} {'T':>6} | {'ours fw':>8} {'peer fw':>8} {'ratio':>6} | {'ours fw+bw':>10}"
          f" {'peer ops':>9} {'ratio':>6} {'peer module':>11} {'ratio':>6} | {'mamba fw':>8} {'mamba fw+bw':>11}")
    for r in ours:
        key = (r["dtype"], int(r["batch"]), int(r["units"]), int(r["steps"]))
        fw, total = float(r["fused_forward_ms"]), float(r["fused_forward_backward_ms"])
        cells = []
        for op, mine in (("fused_fwd_gru_diag_mh", fw), ("fused ops fw+bw", total), ("module fw+bw", total)):
            theirs = peer.get((op, *key))
            cells.append((f"{theirs:.3f}", f"{theirs / mine:.1f}x") if theirs else ("-", "-"))
        mamba = [peer.get((op, *key)) for op in ("mamba selective_scan fw", "mamba selective_scan fw+bw")]
        mamba = [f"{m:.3f}" if m else "-" for m in mamba]
        print(f"{key[0]:<5} {key[1]:>3} {key[2]:>5} {key[3]:>6} | {fw:8.3f} {cells[0][0]:>8} {cells[0][1]:>6} | "
              f"{total:10.3f} {cells[1][0]:>9} {cells[1][1]:>6} {cells[2][0]:>11} {cells[2][1]:>6} | "
              f"{mamba[0]:>8} {mamba[1]:>11}")


if __name__ == "__main__":
    main()

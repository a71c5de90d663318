"""Torch-level benchmark of flashrnn.nn.LSTM against torch.nn.LSTM (cuDNN), and the per-call overhead
of the Python op over the C++ call. Needs a CUDA device and the flashrnn package (with CUDA).

    python examples/bench/torch_layers_bench.py                        # the paper's shapes, a table
    python examples/bench/torch_layers_bench.py --csv out.csv --quick  # fewer batches, and a CSV

Layers: flashrnn.nn.LSTM (input projection inside, backends fused / alternating / automatic) with
hidden 768 as 12 heads x 64 and 1 head x 768, against torch.nn.LSTM(768, 768) (cuDNN; one head of 768:
cuDNN has no head-wise LSTM), batch_first input [B, T, 768], fp16 and bf16. B = 16, T = 1024, and a
batch sweep 2 .. 256. "fwd" is the forward under torch.no_grad(); "fwd+bwd" the forward and
out.sum().backward() (gradients of the input and every parameter). Times: CUDA events around each
call, after --warmup calls (backend choice, NVRTC compilation, allocator), the median of --iters.

The peer (--nx-flashrnn DIR, in the same run): NX-AI's original flashrnn (its `cuda_fused` and
`cuda` alternating backends), imported as the package `nx_flashrnn` from DIR (the repository's
`flashrnn/` directory copied to DIR/nx_flashrnn, so that its name does not clash with this package; it
compiles its kernels with torch's cpp_extension at the first call of a shape, not timed), wrapped as
a layer like flashrnn.nn.LSTM: the same input projection, then its head-wise LSTM.

The peer compiles every configuration (dtype, heads, head_dim, batch, backend) with nvcc, about a
minute each. --peer-precompile N compiles them all first in N processes at once, each configuration
into its own torch extensions folder under --peer-cache (its loader names extensions by a truncated
list of its constants, so configurations would otherwise share a folder and rebuild each other), then
the timed process loads the built module from that folder. The peer's loader waits a random 0-10 s
before each load to spread out concurrent builds into one folder; with a folder per configuration the
wait has no purpose, and it is skipped (its `time.sleep` only; nothing of its kernels changes). A
configuration that does not compile within --peer-compile-timeout seconds is reported, not timed.

Overhead (the issue's "per-call overhead of the Python op over the C++ call"): the recurrence alone
(no projection) at each shape, forward, no autograd, through
  op   torch.ops.flashrnn.rnn_forward(...)            (output allocation, workspace query and
                                                       allocation, argument checks, dispatch)
  direct flashrnn.lstm(...)                           (what layers call: the op's implementation
                                                       without the dispatcher in plain eager mode)
  raw  flashrnn._core.rnn_forward(...)                 (the C++ call with the same pointers, outputs
                                                       and workspace allocated once beforehand)
each timed as --calls calls back to back between two CUDA events, the median of --iters such timings
(so host time that the GPU hides behind running kernels is not counted, as in training), and as host
time per call (time.perf_counter, no synchronisation inside the loop). overhead = (op - raw) / raw of
the GPU-side time per call. Each timing is steady state: one call is enqueued before the start event,
so the GPU is already busy while the host prepares the timed calls; without it the first call's host
work (tens of microseconds) lands inside the timing, divided by only --calls calls.
"""
from __future__ import annotations

import argparse
import csv
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.utils.cpp_extension

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_lstm_bench import median_ms  # noqa: E402  (CUDA events, warm-up, median: one copy for both benches)

BACKENDS = ("fused", "alternating", "automatic")
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def layer_runs(layer, x):
    def forward():
        with torch.no_grad():
            layer(x)

    def forward_backward():
        out = layer(x)[0]
        out.sum().backward()
        layer.zero_grad(set_to_none=True)
        x.grad = None

    return forward, forward_backward


class PeerLSTM(torch.nn.Module):
    """NX-AI flashrnn's head-wise LSTM behind the input projection flashrnn.nn.LSTM has."""

    def __init__(self, peer, backend, hidden, heads, head_dim, dtype):
        super().__init__()
        self.peer, self.backend, self.heads, self.head_dim = peer, backend, heads, head_dim
        self.dtype_name = {torch.bfloat16: "bfloat16", torch.float16: "float16"}[dtype]
        make = dict(device="cuda", dtype=dtype)
        self.projection = torch.nn.Linear(hidden, 4 * hidden, **make)
        self.R = torch.nn.Parameter(torch.randn(4, heads, head_dim, head_dim, **make) / head_dim**0.5)
        self.b = torch.nn.Parameter(torch.zeros(4, heads, head_dim, **make))

    def forward(self, x):
        batch, steps, _ = x.shape
        gate_inputs = self.projection(x).view(batch, steps, 4, self.heads, self.head_dim)
        return self.peer.flashrnn(gate_inputs, self.R, self.b, function="lstm", backend=self.backend,
                                  dtype=self.dtype_name)


PEER_BACKENDS = ("cuda_fused", "cuda")


def peer_configurations(args, shapes, batches):
    return [(dtype_name, heads, head_dim, batch, backend) for dtype_name in args.dtypes.split(",")
            for heads, head_dim in shapes for batch in batches for backend in PEER_BACKENDS]


def peer_folder(args, dtype_name, heads, head_dim, batch, backend):
    return str(Path(args.peer_cache).resolve() / f"{dtype_name}-{heads}x{head_dim}-b{batch}-{backend}")


def import_peer(directory):
    """nx_flashrnn from directory, with its loader's random wait before each load skipped (see above)."""
    if directory not in sys.path:
        sys.path.insert(0, directory)
    import nx_flashrnn
    from nx_flashrnn.flashrnn import cuda_init

    class TimeWithoutWait:
        def __getattr__(self, name):
            return getattr(time, name)

        @staticmethod
        def sleep(seconds):
            pass

    cuda_init.time = TimeWithoutWait()
    return nx_flashrnn


def compile_peer(task):
    """In a worker process: build one peer configuration by running it once (forward and backward)."""
    directory, folder, dtype_name, heads, head_dim, batch, backend = task
    os.environ["TORCH_EXTENSIONS_DIR"] = folder
    os.environ.setdefault("MAX_JOBS", "2")
    start = time.perf_counter()
    try:
        peer = import_peer(directory)
        hidden = heads * head_dim
        layer = PeerLSTM(peer, backend, hidden, heads, head_dim, DTYPES[dtype_name])
        x = torch.randn(batch, 16, hidden, device="cuda", dtype=DTYPES[dtype_name], requires_grad=True)
        layer(x)[0].float().sum().backward()
        torch.cuda.synchronize()
        return task, None, time.perf_counter() - start
    except Exception as error:  # the peer refusing a shape is a result, reported with the table
        return task, f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}", \
            time.perf_counter() - start


def precompile_peer(args, configurations):
    """Builds every peer configuration in args.peer_precompile processes; returns {configuration: error}."""
    tasks = [(args.nx_flashrnn, peer_folder(args, *c), *c) for c in configurations]
    failed = {}
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.peer_precompile, maxtasksperchild=1) as pool:
        pending = {c: pool.apply_async(compile_peer, (t,)) for c, t in zip(configurations, tasks)}
        for configuration, result in pending.items():
            remaining = args.peer_compile_timeout - (time.perf_counter() - start)
            try:
                _, error, seconds = result.get(timeout=max(remaining, 1.0))
            except multiprocessing.TimeoutError:
                error, seconds = f"not compiled within {args.peer_compile_timeout:.0f} s", float("nan")
            if error:
                failed[configuration] = error
            print(f"# peer {'/'.join(map(str, configuration))}: {error or 'built'} ({seconds:.0f} s)", flush=True)
        pool.terminate()
    print(f"# peer: {len(configurations) - len(failed)} of {len(configurations)} configurations built in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return failed


def bench_layers(args, dtype_name, heads, head_dim, batch, rows):
    import flashrnn

    dtype = DTYPES[dtype_name]
    hidden = heads * head_dim
    x = torch.randn(batch, args.T, hidden, device="cuda", dtype=dtype, requires_grad=True)
    candidates = [(f"flashrnn {backend}", lambda b=backend: flashrnn.nn.LSTM(
        hidden, heads, head_dim, batch_first=True, backend=b, device="cuda", dtype=dtype)) for backend in BACKENDS]
    candidates.append(("torch.nn.LSTM cuDNN", lambda: torch.nn.LSTM(hidden, hidden, batch_first=True, device="cuda",
                                                                     dtype=dtype)))
    if args.peer is not None:
        candidates += [(f"NX-AI flashrnn {backend}", lambda b=backend: PeerLSTM(args.peer, b, hidden, heads, head_dim,
                                                                                 dtype)) for backend in PEER_BACKENDS]
    for name, make in candidates:
        row = {"dtype": dtype_name, "heads": heads, "head_dim": head_dim, "B": batch, "T": args.T, "layer": name}
        if name.startswith("NX-AI") and args.peer_cache:
            configuration = (dtype_name, heads, head_dim, batch, name.split()[-1])
            if configuration in args.peer_failed:
                row["note"] = args.peer_failed[configuration]
                rows.append(row)
                print_row(row)
                continue
            os.environ["TORCH_EXTENSIONS_DIR"] = peer_folder(args, *configuration)
            # torch numbers a rebuilt extension name_v1, name_v2, ... within a process when the same name comes
            # with other flags; each configuration's own folder holds its build under the plain name.
            torch.utils.cpp_extension.JIT_EXTENSION_VERSIONER.entries.clear()
        try:
            layer = make()
            forward, forward_backward = layer_runs(layer, x)
            row["fwd_ms"] = median_ms(forward, args.warmup, args.iters)
            row["fwd_bwd_ms"] = median_ms(forward_backward, args.warmup, args.iters)
        except Exception as error:  # e.g. no fused tiling for 1x768, or a shape the peer refuses: reported
            if not name.startswith("NX-AI") and not isinstance(error, (flashrnn.Error, torch.cuda.OutOfMemoryError)):
                raise  # a bug of ours is not a benchmark row
            row["note"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
            torch.cuda.empty_cache()
        rows.append(row)
        print_row(row)


def bench_overhead(args, dtype_name, heads, head_dim, batch, rows):
    """The Python op against the raw C++ call with the same pointers (see the module docstring)."""
    import flashrnn
    from flashrnn import _core, _ops

    dtype = DTYPES[dtype_name]
    x = torch.randn(args.T, batch, 4, heads, head_dim, device="cuda", dtype=dtype)
    R = torch.randn(4, heads, head_dim, head_dim, device="cuda", dtype=dtype) / head_dim**0.5
    b = torch.zeros(4, heads, head_dim, device="cuda", dtype=dtype)
    s0 = torch.zeros(2, batch, heads, head_dim, device="cuda", dtype=dtype)
    sizes = (args.T, batch, heads, head_dim)
    device = x.device
    for backend in BACKENDS:
        row = {"dtype": dtype_name, "heads": heads, "head_dim": head_dim, "B": batch, "T": args.T,
               "layer": f"overhead {backend}"}
        try:
            def op():
                torch.ops.flashrnn.rnn_forward("lstm", x, R, b, s0, False, backend, "full", 0.0, False)

            def direct():
                flashrnn.lstm(x, R, b, s0, backend=backend)

            states, last_state, _ = _ops._rnn_forward_outputs("lstm", x, False, False)
            name = _ops._dtype_name(dtype)
            workspace_bytes = _core.rnn_workspace_bytes("lstm", name, sizes, False, backend, False, device.index)
            workspace = _ops._workspace_buffer(workspace_bytes, device)
            arguments = ("lstm", sizes, False, backend, *(_ops._device_tensor(t) for t in (x, R, b, s0, states,
                                                                                             last_state)),
                         None, workspace.data_ptr(), workspace_bytes, device.index, _ops._stream(device))

            def raw():
                _core.rnn_forward(*arguments)

            with torch.no_grad():
                for label, run in (("op", op), ("direct", direct), ("raw", raw)):
                    row[f"{label}_gpu_ms"] = steady_median_ms(run, args.calls, args.warmup, args.iters)
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    for _ in range(args.calls):
                        run()
                    row[f"{label}_host_us"] = (time.perf_counter() - start) / args.calls * 1e6
                    torch.cuda.synchronize()
            row["overhead_pct"] = 100.0 * (row["op_gpu_ms"] - row["raw_gpu_ms"]) / row["raw_gpu_ms"]
        except flashrnn.Error as error:
            row["note"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
        rows.append(row)
        print_row(row)


def steady_median_ms(run, calls, warmup, iters):
    """GPU time per call of `calls` back-to-back calls, with one call in flight before the start event
    (the steady state of a training loop; see the module docstring); median of `iters` timings."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        run()
        start.record()
        for _ in range(calls):
            run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / calls)
    return statistics.median(times)


COLUMNS = ["dtype", "heads", "head_dim", "B", "T", "layer", "fwd_ms", "fwd_bwd_ms", "op_gpu_ms", "direct_gpu_ms",
           "raw_gpu_ms", "overhead_pct", "op_host_us", "direct_host_us", "raw_host_us", "note"]


def print_row(row):
    cells = []
    for column in COLUMNS:
        value = row.get(column, "")
        cells.append(f"{value:.3f}" if isinstance(value, float) else str(value))
    print(" | ".join(cells), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--T", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=16, help="the batch of the main table")
    parser.add_argument("--batches", default="2,4,8,16,32,64,128,256", help="the batch sweep")
    parser.add_argument("--shapes", default="12x64,1x768", help="hidden as heads x head_dim")
    parser.add_argument("--dtypes", default="fp16,bf16")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--calls", type=int, default=10, help="back-to-back calls per overhead timing")
    parser.add_argument("--overhead-only", action="store_true", help="time only the per-call overhead")
    parser.add_argument("--quick", action="store_true", help="batches 2, 16, 256 and fewer iterations")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    parser.add_argument("--nx-flashrnn", metavar="DIR", help="also time NX-AI flashrnn, imported as nx_flashrnn from DIR")
    parser.add_argument("--peer-precompile", type=int, default=0, metavar="N",
                        help="build every peer configuration first, in N processes (see above)")
    parser.add_argument("--peer-cache", default="peer-extensions",
                        help="root of the per-configuration extension folders of --peer-precompile")
    parser.add_argument("--peer-compile-timeout", type=float, default=420.0,
                        help="seconds for building all peer configurations")
    args = parser.parse_args(argv)
    args.peer, args.peer_failed = None, {}
    if not args.peer_precompile:
        args.peer_cache = None
    if args.nx_flashrnn:
        args.peer = import_peer(args.nx_flashrnn)
    if not torch.cuda.is_available():
        print("torch_layers_bench: needs a CUDA device (torch.cuda.is_available() is False); nothing measured")
        return 0
    import flashrnn

    if not flashrnn.built_with_cuda():
        print("torch_layers_bench: flashrnn was built without CUDA; nothing measured")
        return 0
    if args.quick:
        args.batches, args.iters, args.warmup = "2,16,256", 5, 2
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    batches = sorted({args.batch, *(int(b) for b in args.batches.split(","))})
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, T={args.T}; times in ms (median of "
          f"{args.iters} after {args.warmup} warm-up calls), host in us per call")
    if args.peer is not None and args.peer_precompile:
        args.peer_failed = precompile_peer(args, peer_configurations(args, shapes, batches))
    print(" | ".join(COLUMNS))
    rows: list[dict] = []
    for dtype_name in args.dtypes.split(","):
        for heads, head_dim in shapes:
            for batch in batches:
                if not args.overhead_only:
                    bench_layers(args, dtype_name, heads, head_dim, batch, rows)
                bench_overhead(args, dtype_name, heads, head_dim, batch, rows)
                if args.csv:  # rewritten after every shape, so that a run cut short keeps what it measured
                    with open(args.csv, "w", newline="") as f:
                        writer = csv.DictWriter(f, fieldnames=COLUMNS)
                        writer.writeheader()
                        writer.writerows(rows)
    if args.csv:
        print(f"# wrote {len(rows)} rows to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Do DDP and FSDP2 give the gradients of one process on the whole batch?

    torchrun --nproc-per-node 2 examples/distributed/check_gradients.py --device cpu --dtype float64
    torchrun --nproc-per-node 2 examples/distributed/check_gradients.py --device cuda --autocast

Every rank builds the model from the same seed and keeps an unwrapped copy. The copy runs the global
batch (all ranks' rows) in this process; the wrapped model runs the rank's rows under the engine, which
averages the gradients over the ranks. With equal rows per rank the two are the same gradient, up to
round-off: each parameter's ||g_engine - g_whole|| / ||g_whole|| must be within the tolerance (float64
on the CPU: round-off, 1e-12; float32 on CUDA: 1e-3, the fused kernels multiply in tf32; bf16 autocast:
3e-2). Exit status 1 when one is not; --json writes every parameter's error (rank 0).
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engines  # noqa: E402
from language_model import ModelConfig, next_token_loss  # noqa: E402
from token_data import make_dataset, rank_rows  # noqa: E402
from train_lm import DTYPES, autocast_of, build_model  # noqa: E402


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engines", default="ddp,fsdp2")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float32")
    p.add_argument("--autocast", action="store_true", help="bf16 autocast (CUDA)")
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--mixers", default="lstm,slstm,flash_gru,flash_lstm")
    p.add_argument("--backend", default="automatic", help="of the head-wise mixers")
    # Not "automatic": its choice depends on the batch, which differs between a rank and the whole, and
    # Newton's 3 iterations and the sequential solution differ by more than round-off.
    p.add_argument("--newton-backend", default="newton", help="of flash_gru, flash_lstm")
    p.add_argument("--batch", type=int, default=2, help="sequences per rank")
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--tolerance", type=float, help="default: by dtype (see above)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    unknown = [e for e in args.engines.split(",") if e not in engines.ENGINES]
    if unknown:
        p.error(f"unknown engines {unknown} (of {', '.join(engines.ENGINES)})")
    return args


def default_tolerance(dtype: torch.dtype, autocast: bool) -> float:
    if autocast:
        return 3e-2
    return 1e-12 if dtype == torch.float64 else 1e-3


def relative_errors(got: dict[str, torch.Tensor], want: dict[str, torch.Tensor]) -> dict[str, float]:
    errors = {}
    for name, reference in want.items():
        scale = reference.double().norm().item()
        difference = (got[name].double() - reference.double()).norm().item()
        errors[name] = difference / scale if scale > 0 else difference
    return errors


def check(engine: str, args, process: engines.Process) -> dict:
    config = ModelConfig(width=args.width, heads=args.heads, layers=args.layers, mixers=tuple(args.mixers.split(",")),
                         backend=args.backend, newton_backend=args.newton_backend)
    dtype = DTYPES[args.dtype]
    model = build_model(config, dtype, process.device, seed=0)
    whole = copy.deepcopy(model)
    global_batch = make_dataset("synthetic", config.vocab_size).global_batch(
        0, args.batch * process.world_size, args.seq_len).to(process.device)

    with autocast_of(process.device, args.autocast):
        next_token_loss(whole, global_batch).backward()
    want = {name: p.grad for name, p in whole.named_parameters()}

    wrapped = engines.wrap(model, engine, process)
    with autocast_of(process.device, args.autocast):
        next_token_loss(wrapped, rank_rows(global_batch, process.rank, process.world_size)).backward()
    errors = relative_errors(engines.full_gradients(wrapped), want)

    tolerance = args.tolerance if args.tolerance is not None else default_tolerance(dtype, args.autocast)
    worst = max(errors, key=errors.get)
    passed = errors[worst] <= tolerance and all(g.abs().sum() > 0 for g in want.values())
    if process.is_main:
        print(f"{engine}: {process.world_size} ranks x {args.batch} sequences, {args.dtype}"
              f"{' + bf16 autocast' if args.autocast else ''}: largest relative gradient error "
              f"{errors[worst]:.3e} ({worst}) of {len(errors)} parameters, tolerance {tolerance:.0e}: "
              f"{'ok' if passed else 'FAILED'}", flush=True)
    return {"engine": engine, "world_size": process.world_size, "dtype": args.dtype, "autocast": args.autocast,
            "tolerance": tolerance, "largest_error": errors[worst], "largest_error_parameter": worst,
            "errors": errors, "passed": passed}


def main(argv=None) -> int:
    args = parse(argv)
    process = engines.start(args.device)
    try:
        results = [check(engine, args, process) for engine in args.engines.split(",")]
    finally:
        engines.stop()
    if process.is_main and args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    engines.exit_now(main())

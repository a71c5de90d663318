"""Train the recurrent language model of language_model.py with DDP or FSDP2.

    torchrun --nproc-per-node 2 examples/distributed/train_lm.py --engine fsdp2 --steps 50
    python examples/distributed/train_lm.py --engine ddp --device cpu --width 32 --steps 5   # one process

bf16 autocast on CUDA (float32 parameters and optimizer state), the blocks recomputed in the backward
pass (activation checkpointing), tokens/s printed per step and at the end (the tokens over the time of the steps after
the warm-up, which includes NVRTC's compilation of the fused kernels); --json writes the result.
Exit status: 0, or 1 when the loss is not finite.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engines  # noqa: E402
from language_model import MIXERS, ModelConfig, RecurrentLM, next_token_loss  # noqa: E402
from token_data import make_dataset, rank_rows  # noqa: E402

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=engines.ENGINES, default="ddp")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--data", choices=("synthetic", "docs"), default="synthetic")
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--mixers", default="lstm,slstm,flash_gru,flash_lstm",
                   help=f"comma-separated, cycled over the layers; of {', '.join(MIXERS)}")
    p.add_argument("--backend", default="automatic", help="of the head-wise mixers (fused, alternating)")
    p.add_argument("--newton-backend", default="automatic", help="of flash_gru, flash_lstm (newton, sequential)")
    p.add_argument("--batch", type=int, default=8, help="sequences per rank and step")
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2, help="steps left out of the mean tokens/s")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float32", help="parameter dtype")
    p.add_argument("--no-autocast", action="store_true", help="no bf16 autocast on CUDA")
    p.add_argument("--no-checkpoint", action="store_true", help="no activation checkpointing")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="write the result here (rank 0)")
    args = p.parse_args(argv)
    for name in ("batch", "steps", "width", "layers", "heads", "vocab"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.seq_len < 2:
        p.error(f"--seq-len must be at least 2 (a token and the next), got {args.seq_len}")
    if args.warmup < 0 or args.warmup >= args.steps:
        p.error(f"--warmup must be in [0, --steps), got {args.warmup}")
    try:
        model_config(args)
    except ValueError as error:
        p.error(str(error))
    return args


def model_config(args) -> ModelConfig:
    return ModelConfig(vocab_size=args.vocab, width=args.width, layers=args.layers, heads=args.heads,
                       mixers=tuple(args.mixers.split(",")), backend=args.backend,
                       newton_backend=args.newton_backend,
                       checkpoint_blocks=not args.no_checkpoint)


def build_model(config: ModelConfig, dtype: torch.dtype, device: torch.device, seed: int) -> RecurrentLM:
    """The same initial weights on every rank (the seed), so that no broadcast is needed."""
    torch.manual_seed(seed)
    return RecurrentLM(config).to(device=device, dtype=dtype)


def autocast_of(device: torch.device, enabled: bool):
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(args, process: engines.Process) -> dict:
    config = model_config(args)
    dataset = make_dataset(args.data, args.vocab, args.seed)
    model = engines.wrap(build_model(config, DTYPES[args.dtype], process.device, args.seed), args.engine, process)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    global_batch = args.batch * process.world_size
    tokens_per_step = global_batch * (args.seq_len - 1)
    synchronize = torch.cuda.synchronize if process.device.type == "cuda" else (lambda: None)
    losses, rates, times = [], [], []
    for step in range(args.steps):
        tokens = rank_rows(dataset.global_batch(step, global_batch, args.seq_len, args.seed), process.rank,
                           process.world_size).to(process.device)
        synchronize()
        start = time.perf_counter()
        with autocast_of(process.device, not args.no_autocast):
            loss = next_token_loss(model, tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        synchronize()
        seconds = time.perf_counter() - start
        summed_loss = loss.detach().clone()
        torch.distributed.all_reduce(summed_loss)  # a sum: gloo has no average
        losses.append(summed_loss.item() / process.world_size)
        rates.append(tokens_per_step / seconds)
        times.append(seconds)
        if process.is_main:
            print(f"step {step:4d}  loss {losses[-1]:.4f}  {rates[-1]:12.0f} tokens/s  {seconds * 1e3:8.1f} ms",
                  flush=True)
    result = {
        "engine": args.engine, "world_size": process.world_size, "device": device_name(process.device),
        "config": {**vars(args), "json": str(args.json) if args.json else None, "mixers": list(config.mixers)},
        "parameters": sum(p.numel() for p in engines.unwrapped(model).parameters()),  # a DTensor's are global
        "tokens_per_step": tokens_per_step, "losses": losses, "tokens_per_s": rates,
        "mean_tokens_per_s": tokens_per_step * len(times[args.warmup:]) / sum(times[args.warmup:]),
        "peak_memory_bytes": torch.cuda.max_memory_allocated(process.device) if process.device.type == "cuda"
        else None,
    }
    if process.is_main:
        print(f"{args.engine} on {process.world_size} x {result['device']}: {result['mean_tokens_per_s']:.0f} "
              f"tokens/s (steps {args.warmup}..{args.steps - 1}), loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return result


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def main(argv=None) -> int:
    args = parse(argv)
    process = engines.start(args.device)
    try:
        result = train(args, process)
    finally:
        engines.stop()
    if process.is_main and args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if all(math.isfinite(loss) for loss in result["losses"]) else 1


if __name__ == "__main__":
    engines.exit_now(main())

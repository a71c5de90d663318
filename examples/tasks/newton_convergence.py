"""How far Newton's method with a fixed number of iterations gets on parity beyond the training length,
against the exact sequential solution and Newton run to convergence (docs/tasks.md, "Newton on parity").

    python examples/tasks/newton_convergence.py --model flash_lstm --device cpu --steps 4000 --hidden 16

Trains one FlashGRU / FlashLSTM model on parity (train.py's training; on the CPU through the exact
sequential forward, on CUDA through --newton-backend) and prints its accuracy per evaluation length
through each solver as a markdown table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train  # noqa: E402
from data import TASKS  # noqa: E402
from models import NEWTON  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(NEWTON), default="flash_lstm")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-sequences", type=int, default=128)
    parser.add_argument("--iterations", default="3,8,16", help="fixed Newton iteration counts to compare")
    args = parser.parse_args()
    if args.device == "cpu":
        torch.set_num_threads(1)  # the float64 reference is sequential; more threads only contend

    config = train.Config(model=args.model, task="parity", device=args.device, steps=args.steps, batch=args.batch,
                          hidden=args.hidden, lr=args.lr, seed=args.seed, eval_every=0,
                          eval_sequences=args.eval_sequences)
    model, result = train.train_model(config)
    task = TASKS["parity"]
    rows = [("sequential", result["accuracy_exact_solve"]),
            (f"Newton to convergence (<= {result['newton_converged_iterations']} iterations)",
             result["accuracy_newton_converged"])]
    for count in (int(c) for c in args.iterations.split(",")):
        with train.newton_solver(model.recurrent, "newton", count):
            rows.append((f"Newton {count} iterations", train.evaluate(model, task, config, args.eval_sequences)))
    lengths = list(result["accuracy"])
    print(f"\n{args.model}, hidden {args.hidden}, {args.steps} steps on {args.device} "
          f"({result['train_time_s']:.0f} s), final loss {result['final_loss']:.2e}\n")
    print("| evaluated with | " + " | ".join(str(length) for length in lengths) + " |")
    print("| --- |" + " ---: |" * len(lengths))
    for name, accuracy in rows:
        print(f"| {name} | " + " | ".join(f"{accuracy[length]:.3f}" for length in lengths) + " |")


if __name__ == "__main__":
    main()

"""Train one single-layer model of flashrnn.nn on one synthetic task and evaluate it per sequence length.

    python examples/tasks/train.py --model lstm --task parity --device cuda --steps 2000
    python examples/tasks/train.py --model flash_gru --task k_hop --out results/

Writes <out>/<task>/<model>.json (accuracy per evaluation length, train time, steps, final loss, the
configuration and the evaluations during training) and <out>/<task>/<model>.png (accuracy against
evaluation length). Needs the flashrnn package (pip install ./bindings/python/flashrnn, or
PYTHONPATH=build/python in a project build) and matplotlib for the plot. docs/tasks.md explains the tasks.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import IGNORE, TASKS, Task  # noqa: E402
from models import MODELS, NEWTON, SequenceModel  # noqa: E402
from report import plot_accuracy  # noqa: E402


@dataclass
class Config:
    model: str
    task: str
    device: str = "cpu"
    steps: int = 1000
    batch: int = 64
    hidden: int = 64
    heads: int = 4
    lr: float = 1e-3
    seed: int = 0
    eval_every: int = 250
    eval_sequences: int = 512      # per evaluation length, at the end (a quarter of it during training)
    newton_iterations: int = 3
    newton_backend: str = "newton"  # FlashGRU / FlashLSTM on CUDA: "newton" or "sequential" (exact)


def learning_rate(step: int, config: Config) -> float:
    """Linear warm-up over the first tenth, then cosine decay to a tenth of the peak (paper 000 App. K)."""
    warmup = max(1, config.steps // 10)
    if step < warmup:
        return config.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, config.steps - warmup)
    return config.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def loss_of(model: SequenceModel, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = model(tokens)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def evaluate(model: SequenceModel, task: Task, config: Config, sequences: int) -> dict[int, float]:
    """Accuracy per evaluation length on sequences drawn from a seed of their own (the same for every
    model): parity scores the last position (the whole sequence's parity), the others every target."""
    model.eval()
    accuracy = {}
    for length in task.eval_lengths:
        generator = torch.Generator().manual_seed(10_000 + length)
        correct = total = 0
        for start in range(0, sequences, config.batch):
            tokens, targets = task.batch(min(config.batch, sequences - start), length, generator)
            if task.score_last_only:
                targets = torch.cat([torch.full_like(targets[:, :-1], IGNORE), targets[:, -1:]], 1)
            predicted = model(tokens.to(config.device)).argmax(-1).cpu()
            scored = targets != IGNORE
            correct += int((predicted[scored] == targets[scored]).sum())
            total += int(scored.sum())
        accuracy[length] = correct / max(1, total)
    model.train()
    return accuracy


# Newton "to convergence": stop once every residual is within these (absolute, relative) bounds, at most
# as many iterations as the sequence is long. Newton's k-th iteration makes the first k states exact
# (state t depends only on the states before it), so that many iterations give the sequential solution
# up to round-off; the tolerance, above fp32 round-off of states in [-1, 1], stops it earlier.
NEWTON_TOLERANCE = (1e-5, 1e-5)


@contextlib.contextmanager
def newton_solver(layer: torch.nn.Module, backend: str, max_iterations: int = 3,
                  tolerance: tuple[float, float] | None = None):
    """Runs a FlashGRU / FlashLSTM layer with another solver for the duration; yields the list that
    collects the Newton iterations of each call (the solver's statistics)."""
    saved = layer.backend, layer.max_iterations, layer.tolerance
    layer.backend, layer.max_iterations, layer.tolerance = backend, max_iterations, tolerance
    iterations: list[int] = []
    forward = layer.forward

    def recording(input, state=None):
        hidden, last_state, statistics = forward(input, state, return_statistics=True)
        iterations.append(int(statistics[0]))
        return hidden, last_state

    layer.forward = recording
    try:
        yield iterations
    finally:
        del layer.forward
        layer.backend, layer.max_iterations, layer.tolerance = saved


def summary_accuracy(task: Task, accuracy: dict[int, float]) -> float:
    """The number in the table: parity's mean over 40..256 (extrapolation), else the training length's."""
    if task.score_last_only:
        return sum(accuracy.values()) / len(accuracy)
    return accuracy[task.train_length]


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def progress(step: int, config: Config, loss: float, started: float) -> None:
    elapsed = time.perf_counter() - started
    remaining = elapsed / max(1, step) * (config.steps - step)
    width = 30
    filled = width * step // config.steps
    print(f"\r{config.task} {config.model} [{'#' * filled}{'.' * (width - filled)}] {step}/{config.steps} "
          f"loss {loss:.4f} {elapsed:.0f}s, {remaining:.0f}s left ", end="", file=sys.stderr, flush=True)


def train(config: Config, task: Task | None = None) -> dict:
    """Trains and evaluates one model; returns the result that train.py writes as JSON. `task` replaces
    TASKS[config.task] (other lengths, as the tests' tiny runs)."""
    return train_model(config, task)[1]


def train_model(config: Config, task: Task | None = None) -> tuple[SequenceModel, dict]:
    """train(), also returning the trained model (to evaluate it further, e.g. with other solvers)."""
    task = task or TASKS[config.task]
    torch.manual_seed(config.seed)
    model = SequenceModel(config.model, task.vocabulary, config.hidden, heads=config.heads,
                          convolution=task.convolution, device=config.device,
                          newton_iterations=config.newton_iterations,
                          newton_backend=config.newton_backend).to(config.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=1e-6)
    generator = torch.Generator().manual_seed(config.seed)
    history, losses = [], []
    synchronize(config.device)
    started = time.perf_counter()
    for step in range(config.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, config)
        tokens, targets = task.batch(config.batch, task.train_length, generator)
        loss = loss_of(model, tokens.to(config.device), targets.to(config.device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            raise FloatingPointError(f"{config.task} {config.model}: the loss is {losses[-1]} at step {step}")
        done = step + 1
        if done % 10 == 0 or done == config.steps:
            progress(done, config, sum(losses[-10:]) / len(losses[-10:]), started)
        if config.eval_every > 0 and done % config.eval_every == 0 and done < config.steps:
            accuracy = evaluate(model, task, config, max(1, config.eval_sequences // 4))
            history.append({"step": done, "loss": losses[-1], "accuracy": accuracy})
            print(f"\n  step {done}: accuracy {summary_accuracy(task, accuracy):.3f}", file=sys.stderr)
    synchronize(config.device)
    train_time = time.perf_counter() - started
    print(file=sys.stderr)
    accuracy = evaluate(model, task, config, config.eval_sequences)
    result = {
        "task": config.task,
        "model": config.model,
        "accuracy": accuracy,
        "summary_accuracy": summary_accuracy(task, accuracy),
        "train_length": task.train_length,
        "train_time_s": train_time,
        "steps": config.steps,
        "first_loss": sum(losses[:10]) / len(losses[:10]),
        "final_loss": sum(losses[-10:]) / len(losses[-10:]),
        "parameters": sum(p.numel() for p in model.parameters()),
        "device_name": torch.cuda.get_device_name() if config.device.startswith("cuda") else "cpu",
        "config": asdict(config),
        "history": history,
    }
    # A Newton model evaluated again with the exact sequential solution (what the trained cell computes,
    # apart from how far a fixed number of Newton iterations converges on sequences longer than trained)
    # and with Newton's method run to convergence (NEWTON_TOLERANCE).
    if config.model in NEWTON:
        with newton_solver(model.recurrent, "sequential"):
            exact = evaluate(model, task, config, config.eval_sequences)
        with newton_solver(model.recurrent, "newton", max(task.eval_lengths), NEWTON_TOLERANCE) as iterations:
            converged = evaluate(model, task, config, config.eval_sequences)
        result |= {"accuracy_exact_solve": exact, "summary_accuracy_exact_solve": summary_accuracy(task, exact),
                   "accuracy_newton_converged": converged,
                   "summary_accuracy_newton_converged": summary_accuracy(task, converged),
                   "newton_converged_iterations": max(iterations)}
    return model, result


def write_result(result: dict, out: Path) -> Path:
    path = out / result["task"] / f"{result['model']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


def read_result(path: Path) -> dict:
    """A result JSON with its accuracy keys as ints again (JSON keys are strings)."""
    result = json.loads(path.read_text())
    for key in ("accuracy", "accuracy_exact_solve", "accuracy_newton_converged"):
        if key in result:
            result[key] = {int(length): value for length, value in result[key].items()}
    return result


def arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options shared with run_all.py (their defaults None: the caller's plan decides)."""
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--batch", type=int)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--heads", type=int, help="heads of the head-wise cells (hidden must be a multiple)")
    parser.add_argument("--lr", type=float)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--eval-every", type=int, help="steps between evaluations during training (0: none)")
    parser.add_argument("--eval-sequences", type=int, help="sequences per evaluation length")
    parser.add_argument("--newton-iterations", type=int, help="Newton iterations of flash_gru / flash_lstm on CUDA")
    parser.add_argument("--newton-backend", choices=["newton", "sequential"],
                        help="FlashGRU / FlashLSTM on CUDA (default newton)")
    parser.add_argument("--out", type=Path, default=Path("results"), help="folder of the results")
    return parser


def config_from(args: argparse.Namespace, model: str, task: str, plan: dict | None = None) -> Config:
    """A Config from the plan's values, overridden by the options given on the command line."""
    values = dict(plan or {})
    for field in ("device", "steps", "batch", "hidden", "heads", "lr", "seed", "eval_every", "eval_sequences",
                  "newton_iterations", "newton_backend"):
        if getattr(args, field) is not None:
            values[field] = getattr(args, field)
    return Config(model=model, task=task, **values)


def main() -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.split("\n")[0]))
    parser.add_argument("--model", choices=MODELS, required=True)
    parser.add_argument("--task", choices=sorted(TASKS), default="parity")
    args = parser.parse_args()
    result = train(config_from(args, args.model, args.task))
    path = write_result(result, args.out)
    plot_accuracy([result], path.with_suffix(".png"))
    print(f"{args.task} {args.model}: accuracy {result['summary_accuracy']:.3f} "
          f"({', '.join(f'{length}: {value:.3f}' for length, value in result['accuracy'].items())}), "
          f"trained in {result['train_time_s']:.1f} s; wrote {path}")


if __name__ == "__main__":
    main()

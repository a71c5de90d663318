"""Train and evaluate every model on parity, and the Newton and linear models on k-hop and MQAR; write
the results, the markdown table of docs/tasks.md and the plot.

    python examples/tasks/run_all.py --device cuda --out results/              # everything
    python examples/tasks/run_all.py --models lstm,gru --tasks parity           # a subset

Resumable: a (task, model) whose <out>/<task>/<model>.json exists is not trained again (--force does);
the table (<out>/table.md), the collected results (<out>/results.json) and the plot (<out>/accuracy.png)
are written from every result present after each model, so runs split over several calls add up;
--report-only writes them without training.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import TASKS  # noqa: E402
from models import MODELS  # noqa: E402
from report import markdown_table, plot_accuracy  # noqa: E402
from train import arguments, config_from, read_result, train, write_result  # noqa: E402

# Sizes and steps for one H100: 3000 parity steps took 11-12 s per model there (2026-11-24), so every
# plan takes well under a minute per model; the command line overrides any of them.
PLANS = {
    "parity": {"steps": 10000, "batch": 256, "hidden": 64, "lr": 3e-3, "eval_every": 2000, "eval_sequences": 1024},
    "k_hop": {"steps": 6000, "batch": 64, "hidden": 64, "lr": 2e-3, "eval_every": 1000, "eval_sequences": 512},
    "mqar": {"steps": 6000, "batch": 64, "hidden": 64, "lr": 2e-3, "eval_every": 1000, "eval_sequences": 512},
}
MODELS_OF_TASK = {
    "parity": MODELS,
    "k_hop": ("flash_gru", "flash_lstm", "linrec", "rglru"),
    "mqar": ("flash_gru", "flash_lstm", "linrec", "rglru"),
}


def names(text: str, valid, what: str) -> list[str]:
    chosen = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in valid]
    if unknown:
        raise SystemExit(f"run_all.py: unknown {what} {', '.join(unknown)} (valid: {', '.join(valid)})")
    return chosen


def write_report(out: Path) -> list[dict]:
    """results.json, table.md and accuracy.png from every <task>/<model>.json under out."""
    results = [read_result(path) for task in TASKS for model in MODELS
               if (path := out / task / f"{model}.json").exists()]
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "table.md").write_text(markdown_table(results))
    if results:
        plot_accuracy(results, out / "accuracy.png")
    return results


def main() -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.split("\n")[0]))
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of " + ", ".join(TASKS))
    parser.add_argument("--force", action="store_true", help="train again where a result exists")
    parser.add_argument("--report-only", action="store_true", help="only write the table and plot of --out")
    args = parser.parse_args()
    if args.report_only:
        print(markdown_table(write_report(args.out)))
        return
    models, tasks = names(args.models, MODELS, "model"), names(args.tasks, tuple(TASKS), "task")
    for task in tasks:
        for model in (m for m in models if m in MODELS_OF_TASK[task]):
            path = args.out / task / f"{model}.json"
            if path.exists() and not args.force:
                print(f"{task} {model}: kept {path}", file=sys.stderr)
                continue
            result = train(config_from(args, model, task, PLANS[task]))
            write_result(result, args.out)
            write_report(args.out)
            print(f"{task} {model}: accuracy {result['summary_accuracy']:.3f}, {result['train_time_s']:.1f} s",
                  file=sys.stderr)
    results = write_report(args.out)
    print(markdown_table(results))


if __name__ == "__main__":
    main()

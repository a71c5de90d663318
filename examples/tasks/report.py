"""The results of train.py as a markdown table and a plot of accuracy against evaluation length."""
from __future__ import annotations

import sys
from pathlib import Path

TASK_ORDER = ("parity", "k_hop", "mqar")
TASK_HEADINGS = {"parity": "parity, L 40-256 (trained <= 40)", "k_hop": "k-hop (k=2, V=5), L 100",
                 "mqar": "MQAR (kappa=2, V=128), L 100"}


def markdown_table(results: list[dict]) -> str:
    """One row per model, one accuracy column per task (with its train time; for a Newton model also its
    accuracy evaluated with the exact sequential solution and with Newton run to convergence), in the order of
    results."""
    tasks = [task for task in TASK_ORDER if any(r["task"] == task for r in results)]
    models = list(dict.fromkeys(r["model"] for r in results))
    by_key = {(r["task"], r["model"]): r for r in results}
    lines = ["| model | " + " | ".join(TASK_HEADINGS[t] for t in tasks) + " |",
             "| --- |" + " --- |" * len(tasks)]
    for model in models:
        cells = []
        for task in tasks:
            result = by_key.get((task, model))
            cell = "-"
            if result is not None:
                cell = f"{result['summary_accuracy']:.3f} ({result['steps']} steps, {result['train_time_s']:.0f} s)"
                if "summary_accuracy_exact_solve" in result:  # a Newton model: also the exact sequential solution
                    cell += f"; exact solve {result['summary_accuracy_exact_solve']:.3f}"
                if "summary_accuracy_newton_converged" in result:  # and Newton run to convergence
                    cell += (f"; Newton to convergence {result['summary_accuracy_newton_converged']:.3f} "
                             f"(<= {result['newton_converged_iterations']} iterations)")
            cells.append(cell)
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_accuracy(results: list[dict], path: Path) -> bool:
    """One panel per task: accuracy against evaluation length, one line per model. Without matplotlib
    (a machine with no package index) says so and returns False: `run_all.py --report-only` plots the
    results folder later, elsewhere."""
    try:
        import matplotlib
    except ImportError:
        print(f"no plot {path}: matplotlib is not installed (pip install matplotlib, then "
              "run_all.py --report-only --out <results folder>)", file=sys.stderr)
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [task for task in TASK_ORDER if any(r["task"] == task for r in results)]
    figure, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4), squeeze=False)
    for axis, task in zip(axes[0], tasks):
        for result in (r for r in results if r["task"] == task):
            lengths = sorted(result["accuracy"])
            axis.plot(lengths, [result["accuracy"][length] for length in lengths], marker="o", label=result["model"])
        axis.axvline(next(r["train_length"] for r in results if r["task"] == task), color="gray", linestyle=":")
        axis.set(title=TASK_HEADINGS[task], xlabel="evaluation length", ylabel="accuracy", ylim=(0.0, 1.05))
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True

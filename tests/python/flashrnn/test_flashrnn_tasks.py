"""examples/tasks on the CPU at a tiny scale: the generators against plain-Python definitions, every
(task, model) pair of run_all.py through training, evaluation, JSON, table and plot, a nonlinear model
that learns short parity while the linear one does not, and run_all.py's resumption. The full runs are
on the device (docs/tasks.md)."""
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import flashrnn
import pytest
import torch

TASKS_DIR = Path(__file__).resolve().parents[3] / "examples" / "tasks"
sys.path.insert(0, str(TASKS_DIR))

from data import IGNORE, TASKS, k_hop, mqar, parity  # noqa: E402
from report import markdown_table, plot_accuracy  # noqa: E402
from models import MODELS  # noqa: E402
from run_all import MODELS_OF_TASK, names, write_report  # noqa: E402
from train import NEWTON_TOLERANCE, Config, newton_solver, read_result, train, write_result  # noqa: E402

# Short sequences so that a pair trains in about a second on the CPU reference.
TINY = {"parity": dataclasses.replace(TASKS["parity"], train_length=10, eval_lengths=(10, 20)),
        "k_hop": dataclasses.replace(TASKS["k_hop"], train_length=16, eval_lengths=(16,)),
        "mqar": dataclasses.replace(TASKS["mqar"], train_length=16, eval_lengths=(16,))}


def generator(seed=0):
    return torch.Generator().manual_seed(seed)


def test_generators_are_deterministic_from_the_seed():
    for make in (parity, k_hop, mqar):
        first, second, other = make(4, 30, generator(1)), make(4, 30, generator(1)), make(4, 30, generator(2))
        assert all(torch.equal(a, b) for a, b in zip(first, second))
        assert not torch.equal(first[0], other[0])


def test_parity_targets_are_the_running_parity():
    tokens, targets = parity(5, 17, generator())
    assert set(tokens.unique().tolist()) <= {0, 1}
    for row, target in zip(tokens.tolist(), targets.tolist()):
        assert target == [sum(row[: l + 1]) % 2 for l in range(len(row))]


def k_hop_by_definition(row, hops):
    """Sanford et al.: find(l) = 1 + the latest j < l with row[j] == row[l]; target row[find^k(l)]."""
    def find(position):
        earlier = [j for j in range(position) if row[j] == row[position]]
        return earlier[-1] + 1 if earlier else None

    targets = []
    for position in range(len(row)):
        reached = position
        for _ in range(hops):
            reached = None if reached is None else find(reached)
        targets.append(IGNORE if reached is None else row[reached])
    return targets


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_k_hop_targets_follow_the_definition(hops):
    tokens, targets = k_hop(6, 40, generator(hops), hops=hops, vocabulary=5)
    for row, target in zip(tokens.tolist(), targets.tolist()):
        assert target == k_hop_by_definition(row, hops)
    assert (targets != IGNORE).float().mean() > 0.5  # with 5 symbols most positions have a chain


def test_mqar_queries_ask_for_the_values_of_the_opening_pairs():
    tokens, targets = mqar(8, 60, generator(), pairs=3, vocabulary=20)
    for row, target in zip(tokens.tolist(), targets.tolist()):
        keys, values = row[0:6:2], row[1:6:2]
        assert len(set(keys)) == 3 and all(k < 10 for k in keys) and all(10 <= v < 20 for v in values)
        pairs = dict(zip(keys, values))
        for token, expected in zip(row[6:], target[6:]):
            assert expected == (pairs[token] if token < 10 else IGNORE)
        assert target[:6] == [IGNORE] * 6


def test_mqar_refuses_a_sequence_too_short_for_its_pairs():
    with pytest.raises(ValueError, match="length 4 must exceed 2 \\* pairs = 4"):
        mqar(2, 4, generator(), pairs=2)


def tiny_config(model, task, **changes):
    values = dict(model=model, task=task, steps=6, batch=4, hidden=8, heads=2, lr=3e-3, eval_every=3,
                  eval_sequences=4)
    values.update(changes)
    return Config(**values)


def test_every_model_of_every_task_trains_evaluates_and_reports(tmp_path):
    results = []
    for task, models in MODELS_OF_TASK.items():
        for model in models:
            result = train(tiny_config(model, task), TINY[task])
            assert set(result["accuracy"]) == set(TINY[task].eval_lengths)
            assert all(0.0 <= value <= 1.0 for value in result["accuracy"].values())
            assert torch.isfinite(torch.tensor(result["final_loss"])) and result["train_time_s"] > 0
            assert len(result["history"]) == 1 and result["history"][0]["step"] == 3
            per_length = {key: value for key, value in result.items() if key.startswith("accuracy")}
            assert read_result(write_result(result, tmp_path)) == json.loads(json.dumps(result)) | per_length
            results.append(result)
    collected = write_report(tmp_path)
    assert len(collected) == len(results) == 16
    table = (tmp_path / "table.md").read_text()
    assert table == markdown_table(collected) and table.count("\n") == 2 + 8
    assert "| flash_gru | " in table and "| lstm | " in table and table.count(" - |") == 4 * 2
    assert (tmp_path / "accuracy.png").stat().st_size > 10_000
    assert plot_accuracy(collected[:1], tmp_path / "one.png") and (tmp_path / "one.png").exists()


def test_a_nonlinear_model_learns_short_parity_and_the_linear_one_does_not():
    """A few hundred steps: the GRU's loss falls far and it gets the parity of twice the training
    length; LinRec's loss stays near log 2 (chance) on most positions."""
    learned = train(tiny_config("gru", "parity", steps=200, batch=16, lr=1e-2, eval_every=0, eval_sequences=64),
                    TINY["parity"])
    assert learned["final_loss"] < 0.2 * learned["first_loss"]
    assert learned["accuracy"][10] >= 0.95 and learned["accuracy"][20] >= 0.9
    linear = train(tiny_config("linrec", "parity", steps=150, batch=16, lr=1e-2, eval_every=0, eval_sequences=64),
                   TINY["parity"])
    assert linear["final_loss"] > 0.5 and linear["accuracy"][20] < 0.75


@pytest.mark.parametrize("task, drop", [("k_hop", 0.1), ("mqar", 0.3)])
def test_the_newton_model_reduces_the_loss_of_the_recall_tasks(task, drop):
    """40 steps: the loss falls from about log |V| (MQAR: first towards log 64, the values' share)."""
    result = train(tiny_config("flash_gru", task, steps=40, batch=8, lr=1e-2, eval_every=0), TINY[task])
    assert result["final_loss"] < result["first_loss"] - drop


def test_a_newton_model_is_also_evaluated_exactly_and_with_newton_to_convergence():
    """The trained FlashLSTM's weights run again through the sequential solution and through Newton with a
    tolerance and at most as many iterations as the longest sequence: the two agree (Newton's k-th iteration
    makes the first k states exact), the iterations stay within that bound, and the layer's own solver
    settings come back afterwards."""
    config = tiny_config("flash_lstm", "parity", steps=120, batch=16, lr=1e-2, eval_every=0, eval_sequences=64)
    result = train(config, TINY["parity"])
    exact, converged = result["accuracy_exact_solve"], result["accuracy_newton_converged"]
    assert exact.keys() == converged.keys() == {10, 20}
    assert all(abs(converged[length] - exact[length]) <= 2 / 64 for length in exact)
    assert 1 <= result["newton_converged_iterations"] <= 20
    assert "Newton to convergence" in markdown_table([result])

    layer = flashrnn.nn.FlashLSTM(4, 4, batch_first=True, max_iterations=5)
    with newton_solver(layer, "newton", 7, NEWTON_TOLERANCE) as iterations:
        assert (layer.backend, layer.max_iterations, layer.tolerance) == ("newton", 7, NEWTON_TOLERANCE)
        hidden, _ = layer(torch.randn(2, 6, 4))
    assert hidden.shape == (2, 6, 4) and len(iterations) == 1 and 1 <= iterations[0] <= 7
    assert (layer.backend, layer.max_iterations, layer.tolerance) == ("automatic", 5, None)
    assert "forward" not in vars(layer)


def test_the_newton_convergence_script_prints_a_row_per_solver():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    command = [sys.executable, str(TASKS_DIR / "newton_convergence.py"), "--model", "flash_gru", "--steps", "2",
               "--batch", "2", "--hidden", "4", "--eval-sequences", "2", "--iterations", "1,2"]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ")]
    assert len(rows) == 2 + 4 and rows[0].startswith("| evaluated with | 40 | 64 |")
    names = [row.split(" | ")[0] for row in rows[2:]]
    assert names[0] == "| sequential" and names[1].startswith("| Newton to convergence (<= ")
    assert names[2:] == ["| Newton 1 iterations", "| Newton 2 iterations"]
    assert all(len(row.split(" | ")) == 1 + 8 for row in rows[2:])  # a number per evaluation length


def test_run_all_trains_a_subset_once_and_resumes(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, str(TASKS_DIR / "run_all.py"), "--device", "cpu", "--models", "elman,linrec",
               "--tasks", "mqar,parity", "--steps", "2", "--batch", "2", "--hidden", "8", "--heads", "2",
               "--eval-every", "0", "--eval-sequences", "2", "--out", str(tmp_path)]
    (tmp_path / "parity").mkdir()
    (tmp_path / "parity" / "linrec.json").write_text(json.dumps(
        {"task": "parity", "model": "linrec", "accuracy": {"40": 0.5}, "summary_accuracy": 0.5, "steps": 1,
         "train_time_s": 1.0, "train_length": 40}))                                  # as if trained before
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(": kept ") == 1                                       # parity linrec
    assert sorted(p.name for p in (tmp_path / "parity").iterdir()) == ["elman.json", "linrec.json"]
    assert sorted(p.name for p in (tmp_path / "mqar").iterdir()) == ["linrec.json"]  # elman is parity only
    assert "| elman | " in first.stdout and (tmp_path / "accuracy.png").exists()
    with pytest.raises(SystemExit, match="unknown model mamba"):
        names("lstm,mamba", MODELS, "model")

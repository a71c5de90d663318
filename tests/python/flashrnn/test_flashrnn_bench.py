"""examples/bench/torch_layers_bench.py runs: without a GPU it says so and measures nothing; on a GPU a
tiny configuration fills every column and writes the CSV."""
import csv
import importlib.util
import os
from pathlib import Path

from conftest import requires_cuda

SOURCE = Path(os.environ.get("CONSTRINT_SOURCE_DIR", Path(__file__).resolve().parents[3]))
SCRIPT = SOURCE / "examples" / "bench" / "torch_layers_bench.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("torch_layers_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_says_what_it_needs(capsys, monkeypatch):
    bench = load_bench()
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    assert bench.main(["--quick"]) == 0
    assert "needs a CUDA device" in capsys.readouterr().out


@requires_cuda
def test_the_bench_on_a_tiny_problem(tmp_path, capsys):
    bench = load_bench()
    out = tmp_path / "bench.csv"
    assert bench.main(["--T", "32", "--batch", "2", "--batches", "4", "--shapes", "2x16", "--dtypes", "bf16",
                       "--warmup", "1", "--iters", "2", "--calls", "2", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2 * (4 + 3)  # two batches x (four layers + three overhead rows)
    layers = [r for r in rows if not r["layer"].startswith("overhead")]
    assert all(r["fwd_ms"] and r["fwd_bwd_ms"] for r in layers if not r["note"])
    assert any(r["overhead_pct"] for r in rows if r["layer"].startswith("overhead"))

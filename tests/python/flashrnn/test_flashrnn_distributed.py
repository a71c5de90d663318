"""The layers under PyTorch's distributed engines, on the CPU (gloo, two processes launched by torchrun):
DDP and FSDP2 give the gradients of one process on the concatenated batch to float64 round-off, and the
example of examples/distributed trains; the head-wise layers run under bf16 autocast."""
import importlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import flashrnn

SOURCE = Path(os.environ.get("CONSTRINT_SOURCE_DIR", Path(__file__).resolve().parents[3]))
EXAMPLE = SOURCE / "examples" / "distributed"


def torchrun(script: str, *arguments: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(EXAMPLE / script), *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=240)


@pytest.fixture
def example(monkeypatch):
    """The example's modules, imported from examples/distributed."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return {name: importlib.import_module(name)
            for name in ("language_model", "token_data", "engines", "train_lm", "check_gradients")}


def test_ddp_and_fsdp2_on_two_gloo_processes_give_the_gradients_of_the_whole_batch(tmp_path):
    out = tmp_path / "gradients.json"
    run = torchrun("check_gradients.py", "--device", "cpu", "--dtype", "float64", "--engines", "ddp,fsdp2",
                   "--json", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    results = {r["engine"]: r for r in json.loads(out.read_text())}
    assert set(results) == {"ddp", "fsdp2"}
    for engine, result in results.items():
        assert result["world_size"] == 2
        # Every parameter: the four mixers' recurrent weights, biases and diagonals included.
        names = result["errors"].keys()
        assert {"blocks.0.mixer.rnn.recurrent_weights", "blocks.1.mixer.rnn.recurrent_weights",
                "blocks.2.mixer.rnn.diagonals", "blocks.3.mixer.rnn.diagonals", "embedding.weight"} <= names
        assert len(names) == 43
        assert max(result["errors"].values()) <= 1e-12, (engine, result["largest_error_parameter"])
    assert "fsdp2: 2 ranks x 2 sequences, float64: largest relative gradient error" in run.stdout


def test_the_example_trains_with_fsdp2_on_two_gloo_processes(tmp_path):
    out = tmp_path / "train.json"
    run = torchrun("train_lm.py", "--engine", "fsdp2", "--device", "cpu", "--width", "16", "--heads", "2",
                   "--batch", "2", "--seq-len", "16", "--steps", "3", "--warmup", "1", "--data", "docs",
                   "--json", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(out.read_text())
    assert result["engine"] == "fsdp2" and result["world_size"] == 2 and result["device"] == "cpu"
    assert result["tokens_per_step"] == 2 * 2 * 15
    assert len(result["tokens_per_s"]) == 3 and all(rate > 0 for rate in result["tokens_per_s"])
    assert all(math.isfinite(loss) for loss in result["losses"])
    assert "fsdp2 on 2 x cpu:" in run.stdout and "tokens/s" in run.stdout


def test_the_example_learns_the_synthetic_chain_in_one_process(example, tmp_path, capsys):
    out = tmp_path / "train.json"
    assert example["train_lm"].main(["--engine", "ddp", "--device", "cpu", "--width", "16", "--heads", "2",
                                     "--layers", "2", "--mixers", "slstm,flash_gru", "--batch", "16",
                                     "--seq-len", "16", "--steps", "20", "--lr", "3e-2", "--json", str(out)]) == 0
    losses = json.loads(out.read_text())["losses"]
    # Uniform guessing costs log(256) = 5.55; the chain has 4 successors per token, log(4) = 1.39.
    assert losses[0] > 5.4 and losses[-1] < 4.6, losses
    assert "ddp on 1 x cpu:" in capsys.readouterr().out


def test_ranks_split_the_global_batch_into_its_rows(example):
    data = example["token_data"]
    batch = data.SyntheticTokens(256).global_batch(step=3, batch=6, length=10)
    assert torch.equal(batch, data.SyntheticTokens(256).global_batch(step=3, batch=6, length=10))  # every rank
    assert torch.equal(torch.cat([data.rank_rows(batch, r, 3) for r in range(3)]), batch)
    with pytest.raises(ValueError, match="global batch 6 does not split over 4 ranks"):
        data.rank_rows(batch, 0, 4)


def test_the_example_refuses_bad_settings(example):
    lm = example["language_model"]
    with pytest.raises(ValueError, match="mixers \\['lstm', 'mamba'\\]: each must be one of"):
        lm.ModelConfig(mixers=("lstm", "mamba"))
    with pytest.raises(ValueError, match="width 30 is not a multiple of heads 4"):
        lm.ModelConfig(width=30, heads=4)
    with pytest.raises(ValueError, match="--data docs is bytes: it needs --vocab 256, got 100"):
        example["token_data"].make_dataset("docs", 100)
    with pytest.raises(SystemExit) as exit_status:
        example["train_lm"].parse(["--steps", "2", "--warmup", "2"])
    assert exit_status.value.code == 2


@pytest.mark.parametrize("layer_class", [flashrnn.nn.LSTM, flashrnn.nn.SLSTM, flashrnn.nn.GRU, flashrnn.nn.Elman])
def test_headwise_layers_run_under_bf16_autocast_with_float32_parameters(layer_class):
    layer = layer_class(8, num_heads=2, head_dim=4, batch_first=True)
    x = torch.randn(3, 5, 8)
    exact, _ = layer(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output, state = layer(x, torch.zeros(layer.num_states, 3, 8))
    assert output.dtype == torch.bfloat16 and state.dtype == torch.bfloat16
    torch.testing.assert_close(output.float(), exact, atol=3e-2, rtol=3e-2)
    output.float().sum().backward()
    assert layer.recurrent_weights.grad.dtype == torch.float32 and layer.recurrent_weights.grad.abs().sum() > 0


@pytest.mark.parametrize("make_layer", [
    lambda: flashrnn.nn.LSTM(4, num_heads=2, head_dim=3), lambda: flashrnn.nn.SLSTM(4, num_heads=2, head_dim=3),
    lambda: flashrnn.nn.GRU(4, num_heads=2, head_dim=3), lambda: flashrnn.nn.Elman(4, num_heads=2, head_dim=3),
    lambda: flashrnn.nn.RGLRU(4), lambda: flashrnn.nn.FlashGRU(4, 3), lambda: flashrnn.nn.FlashLSTM(4, 3)])
def test_every_tensor_a_layer_holds_is_a_registered_parameter(make_layer):
    """What DDP reduces and FSDP2 shards: a tensor kept as a plain attribute would escape both."""
    layer = make_layer()
    for module in layer.modules():
        plain = [name for name, value in vars(module).items() if isinstance(value, torch.Tensor)]
        assert not plain, (type(module).__name__, plain)
    assert all(type(p) is torch.nn.Parameter for p in layer.parameters())
    assert len(list(layer.buffers())) == 0


requires_two_gpus = pytest.mark.skipif(
    not (torch.cuda.is_available() and flashrnn.built_with_cuda() and torch.cuda.device_count() >= 2),
    reason="fewer than two CUDA devices (or flashrnn built without CUDA): two-GPU test skipped")


@requires_two_gpus
@pytest.mark.parametrize("make_layer", [
    lambda: flashrnn.nn.SLSTM(16, num_heads=2, head_dim=16, batch_first=True),
    lambda: flashrnn.nn.RGLRU(16), lambda: flashrnn.nn.FlashGRU(16, 16, batch_first=True)])
def test_a_layer_on_the_second_gpu_runs_there_while_the_first_is_current(make_layer):
    """What a rank whose tensors live on cuda:1 needs: the ops follow the tensors' device, not the current
    one, and leave the current device as it was; the result is that of cuda:0."""
    torch.cuda.set_device(0)
    x = torch.randn(3, 20, 16)
    results = []
    for device in ("cuda:0", "cuda:1"):
        torch.manual_seed(0)
        layer = make_layer().to(device)
        output = layer(x.to(device))[0]
        output.square().sum().backward()
        assert output.device == torch.device(device)
        assert torch.cuda.current_device() == 0
        results.append([output.cpu()] + [p.grad.cpu() for p in layer.parameters()])
    for on_0, on_1 in zip(*results):
        torch.testing.assert_close(on_1, on_0, atol=1e-4, rtol=1e-4)

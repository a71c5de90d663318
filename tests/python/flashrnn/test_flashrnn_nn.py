"""The layers: flashrnn.nn.LSTM / GRU / Elman built from torch's modules reproduce their outputs and
gradients; head-wise layers train; torch.compile(fullgraph=True) takes a model with a layer."""
import pytest
import torch

import flashrnn
from conftest import requires_cuda

TORCH_MODULES = {
    "lstm": (torch.nn.LSTM, flashrnn.nn.LSTM),
    "gru": (torch.nn.GRU, flashrnn.nn.GRU),
    "elman": (torch.nn.RNN, flashrnn.nn.Elman),
}


def torch_state(cell, state):
    """Our state [S, B, H] as torch's: (h0, c0) each [1, B, H] for the LSTM, h0 [1, B, H] otherwise."""
    return (state[0:1], state[1:2]) if cell == "lstm" else state[0:1]


def final_torch_state(cell, state):
    return torch.cat(state) if cell == "lstm" else state


def assert_same_gradients(cell, theirs, ours):
    hidden = theirs.hidden_size
    torch.testing.assert_close(ours.weight_ih.grad, theirs.weight_ih_l0.grad)
    torch.testing.assert_close(ours.recurrent_weights.grad.view(-1, hidden), theirs.weight_hh_l0.grad)
    bias = ours.bias.grad.view(-1, hidden)
    if cell == "gru":  # rows r, z, n, hn: b_i* and b_h* share r and z; n is b_in, hn is b_hn
        torch.testing.assert_close(bias[:2], theirs.bias_ih_l0.grad.view(3, hidden)[:2])
        torch.testing.assert_close(bias[:2], theirs.bias_hh_l0.grad.view(3, hidden)[:2])
        torch.testing.assert_close(bias[2], theirs.bias_ih_l0.grad.view(3, hidden)[2])
        torch.testing.assert_close(bias[3], theirs.bias_hh_l0.grad.view(3, hidden)[2])
    else:
        torch.testing.assert_close(bias.flatten(), theirs.bias_ih_l0.grad)
        torch.testing.assert_close(bias.flatten(), theirs.bias_hh_l0.grad)


@pytest.mark.parametrize("cell", ["lstm", "gru", "elman"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_from_torch_reproduces_outputs_and_gradients(cell, batch_first, with_state):
    torch_cls, our_cls = TORCH_MODULES[cell]
    theirs = torch_cls(input_size=5, hidden_size=7, batch_first=batch_first, dtype=torch.float64)
    ours = our_cls.from_torch(theirs)
    T, B = 6, 3
    x = torch.randn((B, T, 5) if batch_first else (T, B, 5), dtype=torch.float64)
    states = ours.num_states
    state = torch.randn(states, B, 7, dtype=torch.float64, requires_grad=True) if with_state else None
    x_theirs, x_ours = x.clone().requires_grad_(), x.clone().requires_grad_()

    out_theirs, last_theirs = theirs(x_theirs, None if state is None else torch_state(cell, state))
    out_ours, last_ours = ours(x_ours, state)
    torch.testing.assert_close(out_ours, out_theirs)
    torch.testing.assert_close(last_ours, final_torch_state(cell, last_theirs))

    d_out, d_last = torch.randn_like(out_ours), torch.randn_like(last_ours)
    grads_of_state = []
    for out, last, x_used in [(out_theirs, final_torch_state(cell, last_theirs), x_theirs), (out_ours, last_ours, x_ours)]:
        loss = (out * d_out).sum() + (last * d_last).sum()
        grads_of_state.append(torch.autograd.grad(loss, state, retain_graph=True)[0] if state is not None else None)
        loss.backward()
    torch.testing.assert_close(x_ours.grad, x_theirs.grad)
    assert_same_gradients(cell, theirs, ours)
    if state is not None:
        torch.testing.assert_close(grads_of_state[1], grads_of_state[0])


def test_lstm_from_torch_in_float32():
    theirs = torch.nn.LSTM(8, 16)
    ours = flashrnn.nn.LSTM.from_torch(theirs)
    x = torch.randn(10, 4, 8)
    out_theirs, (h, c) = theirs(x)
    out_ours, last = ours(x)
    torch.testing.assert_close(out_ours, out_theirs, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(last, torch.cat([h, c]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer_cls", [flashrnn.nn.LSTM, flashrnn.nn.GRU, flashrnn.nn.SLSTM, flashrnn.nn.Elman])
def test_headwise_layers_shapes_and_continuation(layer_cls):
    """Running a sequence in two halves, the second from the first's last state, is running it whole."""
    layer = layer_cls(6, num_heads=3, head_dim=4, batch_first=True, dtype=torch.float64)
    x = torch.randn(2, 8, 6, dtype=torch.float64)
    out, last = layer(x)
    assert out.shape == (2, 8, 12) and last.shape == (layer.num_states, 2, 12)
    first, middle = layer(x[:, :5])
    second, last2 = layer(x[:, 5:], middle)
    torch.testing.assert_close(torch.cat([first, second], dim=1), out)
    torch.testing.assert_close(last2, last)


def test_heads_do_not_mix():
    layer = flashrnn.nn.LSTM(4, num_heads=2, head_dim=3, dtype=torch.float64)
    x = torch.randn(5, 2, 4, dtype=torch.float64, requires_grad=True)
    out, _ = layer(x)
    out[..., :3].sum().backward()  # head 0 only
    assert layer.recurrent_weights.grad[:, 1].abs().max() == 0
    assert layer.recurrent_weights.grad[:, 0].abs().max() > 0


def make_layer(layer_cls, **factory):
    """An 8-wide layer of each kind, batch-first."""
    if layer_cls is flashrnn.nn.RGLRU:
        return layer_cls(8, batch_first=True, **factory)
    if layer_cls in (flashrnn.nn.LinRec, flashrnn.nn.FlashGRU, flashrnn.nn.FlashLSTM):
        return layer_cls(8, 8, batch_first=True, **factory)
    return layer_cls(8, num_heads=2, head_dim=4, batch_first=True, **factory)


class Model(torch.nn.Module):
    def __init__(self, layer_cls):
        super().__init__()
        self.rnn = make_layer(layer_cls)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        out, last = self.rnn(x)
        return self.head(out[:, -1]) + last[0].sum()


ALL_LAYERS = [flashrnn.nn.LSTM, flashrnn.nn.GRU, flashrnn.nn.SLSTM, flashrnn.nn.Elman, flashrnn.nn.LinRec,
              flashrnn.nn.RGLRU, flashrnn.nn.FlashGRU, flashrnn.nn.FlashLSTM]
SCAN_AND_NEWTON_LAYERS = [flashrnn.nn.LinRec, flashrnn.nn.RGLRU, flashrnn.nn.FlashGRU, flashrnn.nn.FlashLSTM]


@pytest.mark.parametrize("layer_cls", ALL_LAYERS)
def test_torch_compile_fullgraph(layer_cls):
    torch._dynamo.reset()
    model = Model(layer_cls)
    x = torch.randn(4, 6, 8)
    expected = model(x)
    expected.sum().backward()
    expected_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    actual = compiled(x)
    actual.sum().backward()
    torch.testing.assert_close(actual, expected)
    for p, g in zip(model.parameters(), expected_grads):
        torch.testing.assert_close(p.grad, g)


@pytest.mark.parametrize("layer_cls", [flashrnn.nn.LSTM, flashrnn.nn.RGLRU, flashrnn.nn.FlashLSTM])
def test_torch_compile_inductor(layer_cls):
    torch._dynamo.reset()
    model = Model(layer_cls)
    x = torch.randn(4, 6, 8)
    torch.testing.assert_close(torch.compile(model, fullgraph=True)(x), model(x))


def test_training_reduces_the_loss():
    torch.manual_seed(1)
    model = Model(flashrnn.nn.LSTM)
    x, target = torch.randn(16, 6, 8), torch.randn(16, 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("layer_cls", SCAN_AND_NEWTON_LAYERS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_scan_and_newton_layers_continue_from_their_state(layer_cls, batch_first):
    """Running a sequence in two halves, the second from the first's last state, is running it whole;
    gradients reach the layer's parameters and the state."""
    layer = make_layer(layer_cls, dtype=torch.float64)
    layer.batch_first = batch_first
    x = torch.randn((2, 9, 8) if batch_first else (9, 2, 8), dtype=torch.float64)
    out, last = layer(x)
    assert out.shape == x.shape
    assert last.shape == ((2, 8) if layer_cls in (flashrnn.nn.RGLRU, flashrnn.nn.LinRec) else (layer.num_states, 2, 8))
    cut = (slice(None), slice(0, 5)) if batch_first else (slice(0, 5),)
    rest = (slice(None), slice(5, None)) if batch_first else (slice(5, None),)
    first, middle = layer(x[cut])
    middle = middle.detach().requires_grad_()
    second, last2 = layer(x[rest], middle)
    torch.testing.assert_close(torch.cat([first, second], dim=1 if batch_first else 0), out)
    torch.testing.assert_close(last2, last)
    (second.sum() + last2.sum()).backward()
    assert middle.grad is not None and middle.grad.abs().max() > 0
    assert all(p.grad is not None for p in layer.parameters())


@pytest.mark.parametrize("layer_cls", [flashrnn.nn.FlashGRU, flashrnn.nn.FlashLSTM])
def test_newton_layers_report_statistics_and_agree_across_backends(layer_cls):
    layer = layer_cls(5, 6, dtype=torch.float64)
    x = torch.randn(30, 2, 5, dtype=torch.float64)
    layer.backend = "sequential"
    exact, exact_last = layer(x)
    layer.backend, layer.max_iterations, layer.tolerance = "newton", 30, (1e-12, 0.0)
    out, last, statistics = layer(x, return_statistics=True)
    torch.testing.assert_close(out, exact)
    torch.testing.assert_close(last, exact_last)
    assert statistics.shape == (4,) and statistics[2] == 1 and statistics[1] <= 1e-12


def test_linrec_layer_matches_the_formula_step_by_step():
    """h_t = f_t h_{t-1} + (1 - f_t) u_t with (f, u) = (sigmoid, identity) of the gate projection."""
    layer = flashrnn.nn.LinRec(3, 4, batch_first=False, dtype=torch.float64)
    x = torch.randn(7, 2, 3, dtype=torch.float64)
    state = torch.randn(2, 4, dtype=torch.float64)
    out, last = layer(x, state)
    h = state
    for t in range(7):
        forget, candidate = layer.gates(x[t]).chunk(2, dim=-1)
        f = torch.sigmoid(forget)
        h = f * h + (1 - f) * candidate
        torch.testing.assert_close(out[t], h)
    torch.testing.assert_close(last, h)


def test_linrec_layer_gradients_match_finite_differences():
    layer = flashrnn.nn.LinRec(2, 3, dtype=torch.float64)
    x = torch.randn(2, 5, 2, dtype=torch.float64, requires_grad=True)
    state = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, s, w, b: torch.func.functional_call(
        layer, {"gates.weight": w, "gates.bias": b}, (x, s))[0], (x, state, layer.gates.weight, layer.gates.bias))


@pytest.mark.parametrize("shape", [(2, 0, 3), (2, 3)])
def test_linrec_layer_refuses_an_empty_or_flat_input(shape):
    with pytest.raises(flashrnn.ShapeError, match=r"LinRec: input: expected \[B, L, input\]"):
        flashrnn.nn.LinRec(3, 4)(torch.randn(shape))


def test_rglru_layer_decay_starts_in_griffins_range():
    layer = flashrnn.nn.RGLRU(64)
    a = torch.exp(-torch.nn.functional.softplus(layer.lambda_))
    assert layer.lambda_.dtype == torch.float32
    assert a.min() >= 0.9 - 1e-6 and a.max() <= 0.999 + 1e-6


@requires_cuda
@pytest.mark.parametrize("layer_cls", SCAN_AND_NEWTON_LAYERS)
def test_cuda_scan_and_newton_layers_against_the_cpu(layer_cls):
    layer = make_layer(layer_cls, dtype=torch.float64)
    x = torch.randn(3, 50, 8, dtype=torch.float64)
    expected, expected_last = layer(x)
    layer = layer.float().cuda()
    if hasattr(layer, "backend"):
        layer.backend = "sequential"
    out, last = layer(x.float().cuda())
    torch.testing.assert_close(out.double().cpu(), expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(last.double().cpu(), expected_last, rtol=1e-4, atol=1e-4)
    out.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in layer.parameters())


@requires_cuda
@pytest.mark.parametrize("layer_cls", [flashrnn.nn.RGLRU, flashrnn.nn.FlashLSTM])
def test_cuda_torch_compile_fullgraph_scan_and_newton_layers(layer_cls):
    torch._dynamo.reset()
    model = Model(layer_cls).cuda()
    x = torch.randn(4, 64, 8, device="cuda")
    torch.testing.assert_close(torch.compile(model, fullgraph=True)(x), model(x), rtol=1e-4, atol=1e-4)


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_cuda_lstm_against_cudnn(dtype):
    theirs = torch.nn.LSTM(32, 64, batch_first=True).cuda().to(dtype)
    ours = flashrnn.nn.LSTM.from_torch(theirs)
    x = torch.randn(4, 20, 32, device="cuda", dtype=dtype)
    out_theirs, (h, c) = theirs(x)
    out_ours, last = ours(x)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == torch.float32 else dict(rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(out_ours, out_theirs, **tol)
    torch.testing.assert_close(last, torch.cat([h, c]), **tol)


@requires_cuda
def test_cuda_graph_replay():
    layer = flashrnn.nn.LSTM(16, num_heads=2, head_dim=16, batch_first=True).cuda()
    x = torch.randn(4, 12, 16, device="cuda")
    with torch.no_grad():
        expected, _ = layer(x)  # warm-up: backend choice and kernel compilation happen here
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            layer(x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured, _ = layer(x)
    x.copy_(torch.randn_like(x))
    graph.replay()
    with torch.no_grad():
        torch.testing.assert_close(captured, layer(x)[0])

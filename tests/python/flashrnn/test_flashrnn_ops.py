"""The torch ops: opcheck (schema, fake tensors, autograd registration, AOT dispatch), gradcheck in
float64 on the CPU reference for every cell through both outputs, the CUDA kernels against the CPU."""
import pytest
import torch

import flashrnn
from conftest import requires_cuda

CELLS = ["lstm", "gru", "slstm", "elman"]
# T, B, NH, DH: a size-1 batch and odd sizes among them.
SHAPES = [(3, 2, 2, 3), (1, 1, 1, 1), (4, 1, 3, 2)]


def problem(cell, sizes, dtype=torch.float64, device="cpu", batch_first=False, requires_grad=True):
    """Random gate inputs, R, b and initial states in the library's layouts. The sLSTM's initial
    n is positive (a non-empty state) and its m is kept out of autograd: the kernels, like the original
    FlashRNN, pass no gradient through m (docs/kernels.md)."""
    T, B, NH, DH = sizes
    info = flashrnn.cell_info(cell)
    make = dict(dtype=dtype, device=device)
    outer = (B, T) if batch_first else (T, B)
    x = torch.randn(*outer, info["num_input_gates"], NH, DH, **make)
    R = torch.randn(info["num_recurrent_gates"], NH, DH, DH, **make) / DH**0.5
    b = torch.randn(info["num_gates"], NH, DH, **make) * 0.5
    s0 = torch.randn(info["num_states"], B, NH, DH, **make) * 0.5
    if cell == "slstm":
        s0[2] = s0[2].abs() + 0.5  # n > 0
    for t in (x, R, b, s0):
        t.requires_grad_(requires_grad)
    return x, R, b, s0


def forward_args(cell, x, R, b, s0, batch_first=False, keep_gate_cache=True):
    return (cell, x, R, b, s0, batch_first, "automatic", "full", 0.0, keep_gate_cache)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_opcheck_rnn_forward(cell, batch_first):
    x, R, b, s0 = problem(cell, SHAPES[0], batch_first=batch_first)
    if cell == "slstm":  # no gradient through m: opcheck's autograd checks use every input
        s0 = s0.detach()
    torch.library.opcheck(torch.ops.flashrnn.rnn_forward.default, forward_args(cell, x, R, b, s0, batch_first))


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("with_upstream", [(True, True), (True, False), (False, True)])
def test_opcheck_rnn_backward(cell, with_upstream):
    x, R, b, s0 = problem(cell, SHAPES[0], requires_grad=False)
    states, last_state, gate_cache = torch.ops.flashrnn.rnn_forward(*forward_args(cell, x, R, b, s0))
    d_states = torch.randn_like(states) if with_upstream[0] else None
    d_last_state = torch.randn_like(last_state) if with_upstream[1] else None
    torch.library.opcheck(torch.ops.flashrnn.rnn_backward.default,
                          (cell, R, states, gate_cache, x, b, d_states, d_last_state, False, "automatic", "full", 0.0))


@pytest.mark.parametrize("reverse", [False, True])
def test_opcheck_linrec(reverse):
    x = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    c = torch.rand(3, 7, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.flashrnn.linrec_forward.default, (x, c, reverse))
    y = torch.ops.flashrnn.linrec_forward(x.detach(), c.detach(), reverse)
    torch.library.opcheck(torch.ops.flashrnn.linrec_backward.default, (torch.randn_like(y), c.detach(), y, reverse))


@pytest.mark.parametrize("cell", ["lstm", "gru", "elman"])
@pytest.mark.parametrize("sizes", SHAPES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_gradcheck_every_input_through_both_outputs(cell, sizes, batch_first):
    x, R, b, s0 = problem(cell, sizes, batch_first=batch_first)
    torch.autograd.gradcheck(lambda *a: flashrnn.rnn(cell, *a, batch_first=batch_first), (x, R, b, s0))


@pytest.mark.parametrize("sizes", SHAPES)
def test_gradcheck_slstm_through_h(sizes):
    """The sLSTM's gradient is exact for a loss that reaches the states through h, for the gate
    inputs, R, b and the initial h, c, n (m is a constant of the backward, docs/kernels.md)."""
    x, R, b, s0 = problem("slstm", sizes)
    hcn, m = s0.detach()[:3].requires_grad_(), s0.detach()[3:]

    def hidden(x, R, b, hcn):
        states, last_state = flashrnn.slstm(x, R, b, torch.cat([hcn, m]))
        return states[0], last_state[0]

    torch.autograd.gradcheck(hidden, (x, R, b, hcn))


@pytest.mark.parametrize("cell", CELLS)
def test_gradient_policies(cell):
    """'cut' drops R^T dg: with it the gradient of h0 is only d_states[0, 0]'s (the pointwise paths
    carry the rest); 'clipped' with a huge bound is 'full'."""
    x, R, b, s0 = problem(cell, SHAPES[0])
    grads = {}
    for policy, clip in [("full", 0.0), ("clipped", 1e30), ("cut", 0.0)]:
        states, last = flashrnn.rnn(cell, x, R, b, s0, recurrent_gradient=policy, clip_value=clip)
        grads[policy] = torch.autograd.grad(states[0].sum(), (x, R, b, s0))
    for full, clipped in zip(grads["full"], grads["clipped"]):
        torch.testing.assert_close(full, clipped)
    assert not torch.allclose(grads["cut"][0], grads["full"][0])


def test_forward_matches_textbook_lstm():
    """One step of the LSTM by hand in torch: gates i, f, z, o; c' = s(f) c + s(i) tanh z; h' = s(o) tanh c'."""
    x, R, b, s0 = problem("lstm", (1, 2, 2, 3), requires_grad=False)
    states, last = flashrnn.lstm(x, R, b, s0)
    h, c = s0
    pre = x[0] + b + torch.einsum("ghij,bhj->bghi", R, h)
    i, f, z, o = pre.unbind(1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(z)
    h_new = torch.sigmoid(o) * torch.tanh(c_new)
    torch.testing.assert_close(last, torch.stack([h_new, c_new]))
    torch.testing.assert_close(states[:, 0], s0)
    torch.testing.assert_close(states[:, 1], last)


@pytest.mark.parametrize("reverse", [False, True])
def test_linrec_matches_a_loop_and_gradchecks(reverse):
    x = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    c = torch.rand(2, 3, 5, dtype=torch.float64, requires_grad=True)
    y = flashrnn.linrec(x, c, reverse=reverse)
    expected, h = torch.zeros_like(x), torch.zeros_like(x[..., 0])
    for l in (reversed(range(5)) if reverse else range(5)):
        h = c[..., l] * h + x[..., l]
        expected[..., l] = h
    torch.testing.assert_close(y, expected)
    torch.autograd.gradcheck(lambda x, c: flashrnn.linrec(x, c, reverse=reverse), (x, c))


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_narrower_dtypes_run_the_float64_reference_and_round(cell, dtype):
    """The forward of rounded inputs is float64's on the same values, rounded; the backward reads the
    states as stored (rounded), so its gradients agree to the dtype's precision."""
    inputs = [t.detach().to(dtype) for t in problem(cell, SHAPES[0])]
    wide = [t.double().requires_grad_() for t in inputs]
    narrow = [t.clone().requires_grad_() for t in inputs]
    (states64, last64), (states, last) = flashrnn.rnn(cell, *wide), flashrnn.rnn(cell, *narrow)
    assert states.dtype == last.dtype == dtype
    assert torch.equal(states, states64.to(dtype)) and torch.equal(last, last64.to(dtype))
    d_h = torch.randn_like(states64[0]).to(dtype)
    states64[0].backward(d_h.double())
    states[0].backward(d_h)
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for w, n in zip(wide, narrow):
        assert n.grad.dtype == dtype
        torch.testing.assert_close(n.grad.double(), w.grad, **tolerance)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_linrec_in_narrower_dtypes(dtype):
    x, c = torch.randn(3, 9).to(dtype), torch.rand(3, 9).to(dtype)
    xw, cw = x.double().requires_grad_(), c.double().requires_grad_()
    xn, cn = x.clone().requires_grad_(), c.clone().requires_grad_()
    yw, yn = flashrnn.linrec(xw, cw), flashrnn.linrec(xn, cn)
    assert torch.equal(yn, yw.to(dtype))
    dy = torch.randn(3, 9).to(dtype)
    yw.backward(dy.double())
    yn.backward(dy)
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(xn.grad.double(), xw.grad, **tolerance)
    torch.testing.assert_close(cn.grad.double(), cw.grad, **tolerance)


def test_no_gate_cache_without_gradients():
    x, R, b, s0 = problem("lstm", SHAPES[0], requires_grad=False)
    with torch.no_grad():
        states, last = flashrnn.lstm(x, R, b, s0)
    assert states.grad_fn is None


# ---- On the GPU: the same ops against the CPU float64 reference -------------------------------------

TOLERANCES = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=3e-2, atol=3e-2),
              torch.float16: dict(rtol=5e-3, atol=5e-3)}


def tolerance(dtype, backend):
    """The fused kernels multiply fp32 operands as tf32 (10-bit mantissa, docs/kernels.md), so fp32
    through them is held to fp16's tolerance; automatic may pick them."""
    if dtype == torch.float32 and backend != "alternating":
        return TOLERANCES[torch.float16]
    return TOLERANCES[dtype]


@requires_cuda
@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("backend", ["alternating", "fused", "automatic"])
def test_cuda_forward_backward_against_the_cpu_reference(cell, dtype, backend):
    x, R, b, s0 = problem(cell, (5, 3, 2, 16), requires_grad=False)
    cpu_inputs = [t.to(dtype).double().requires_grad_() for t in (x, R, b, s0)]
    gpu_inputs = [t.to(dtype).cuda().requires_grad_() for t in (x, R, b, s0)]
    expected = flashrnn.rnn(cell, *cpu_inputs)
    actual = flashrnn.rnn(cell, *gpu_inputs, backend=backend)
    for e, a in zip(expected, actual):
        torch.testing.assert_close(a.double().cpu(), e, **tolerance(dtype, backend))
    d_h = torch.randn_like(expected[0][0])
    torch.autograd.backward(expected[0][0], d_h)
    torch.autograd.backward(actual[0][0], d_h.to(dtype).cuda())
    for e, a in zip(cpu_inputs, gpu_inputs):
        torch.testing.assert_close(a.grad.double().cpu(), e.grad, **tolerance(dtype, backend))


@requires_cuda
def test_cuda_opcheck():
    x, R, b, s0 = problem("lstm", (4, 2, 2, 16), dtype=torch.float32, device="cuda")
    torch.library.opcheck(torch.ops.flashrnn.rnn_forward.default, forward_args("lstm", x, R, b, s0))
    xs = torch.randn(3, 64, device="cuda", requires_grad=True)
    cs = torch.rand(3, 64, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.flashrnn.linrec_forward.default, (xs, cs, False))


@requires_cuda
def test_cuda_op_keeps_the_current_device_and_stream():
    x, R, b, s0 = problem("gru", (4, 2, 2, 16), dtype=torch.float32, device="cuda")
    device, stream = torch.cuda.current_device(), torch.cuda.Stream()
    with torch.cuda.stream(stream):
        states, _ = flashrnn.gru(x, R, b, s0)
        assert torch.cuda.current_stream() == stream
    assert torch.cuda.current_device() == device
    stream.synchronize()
    expected, _ = flashrnn.gru(*(t.detach().double().cpu() for t in (x, R, b, s0)))
    torch.testing.assert_close(states.detach().double().cpu(), expected, **tolerance(torch.float32, "automatic"))


@requires_cuda
@pytest.mark.parametrize("reverse", [False, True])
def test_cuda_linrec_against_the_cpu_reference(reverse):
    x = torch.randn(3, 1000, dtype=torch.float64)
    c = torch.rand(3, 1000, dtype=torch.float64)
    xg, cg = x.float().cuda().requires_grad_(), c.float().cuda().requires_grad_()
    xc, cc = x.float().double().requires_grad_(), c.float().double().requires_grad_()
    yg, yc = flashrnn.linrec(xg, cg, reverse=reverse), flashrnn.linrec(xc, cc, reverse=reverse)
    torch.testing.assert_close(yg.double().cpu(), yc, rtol=1e-4, atol=1e-4)
    dy = torch.randn_like(yc)
    yg.backward(dy.float().cuda())
    yc.backward(dy)
    torch.testing.assert_close(xg.grad.double().cpu(), xc.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(cg.grad.double().cpu(), cc.grad, rtol=1e-4, atol=1e-4)

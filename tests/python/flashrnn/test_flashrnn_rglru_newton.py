"""The RG-LRU and Newton ops (rglru_forward/backward, newton_forward/backward, newton_reduce): opcheck,
float64 gradcheck on the CPU reference with gradients for every input (h0 included) through every
output (the final state included), narrower dtypes, and on the GPU each op against the CPU float64
path per dtype, CUDA graph replay, and the current device and stream kept."""
import pytest
import torch

import flashrnn
from conftest import requires_cuda

NEWTON_CELLS = {"flash_gru": (3, 3, 1), "flash_lstm": (3, 5, 2)}  # G, P, S
# (B, R, L) and (T, B, D): size-1 cases and odd sizes among them.
RGLRU_SHAPES = [(2, 3, 5), (1, 1, 1), (3, 2, 7)]
NEWTON_SHAPES = [(4, 2, 3), (1, 1, 1), (5, 1, 2)]


def rglru_problem(sizes, dtype=torch.float64, device="cpu", requires_grad=True, with_h0=True):
    B, R, L = sizes
    states = torch.float64 if dtype == torch.float64 else torch.float32
    x, gate_a, gate_x = (torch.randn(B, R, L, dtype=dtype, device=device) for _ in range(3))
    lambda_ = torch.randn(R, dtype=states, device=device)
    h0 = torch.randn(B, R, dtype=states, device=device) if with_h0 else None
    tensors = [x, gate_a, gate_x, lambda_, h0]
    for t in tensors:
        if t is not None:
            t.requires_grad_(requires_grad)
    return tensors


def newton_problem(cell, sizes, dtype=torch.float64, device="cpu", requires_grad=True, with_state=True):
    """Projections in [-1, 1], diagonals in [-0.5, 0.5] (the paper's fresh scale), a random state."""
    G, P, S = NEWTON_CELLS[cell]
    T, B, D = sizes
    states = torch.float64 if dtype == torch.float64 else torch.float32
    inputs = (torch.rand(G, B, D, T, dtype=torch.float64) * 2 - 1).to(dtype=dtype, device=device)
    parameters = (torch.rand(P, D, dtype=torch.float64) - 0.5).to(dtype=states, device=device)
    initial_state = (torch.randn(S, B, D, dtype=torch.float64) * 0.5).to(states).to(device) if with_state else None
    tensors = [inputs, parameters, initial_state]
    for t in tensors:
        if t is not None:
            t.requires_grad_(requires_grad)
    return tensors


def reduce_problem(structure, sequences=3, length=6, dtype=torch.float64, device="cpu", requires_grad=True):
    K, N = (1, 1) if structure == "diagonal" else (4, 2)
    jacobians = ((torch.rand(K, sequences, length, dtype=torch.float64) - 0.5) * 1.2).to(dtype=dtype, device=device)
    rhs = torch.randn(N, sequences, length, dtype=torch.float64).to(dtype=dtype, device=device)
    return jacobians.requires_grad_(requires_grad), rhs.requires_grad_(requires_grad)


# ---- opcheck -------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_h0", [True, False])
def test_opcheck_rglru(with_h0):
    x, gate_a, gate_x, lambda_, h0 = rglru_problem(RGLRU_SHAPES[0], with_h0=with_h0)
    torch.library.opcheck(torch.ops.flashrnn.rglru_forward.default, (x, gate_a, gate_x, lambda_, h0))
    detached = [None if t is None else t.detach() for t in (x, gate_a, gate_x, lambda_, h0)]
    h, h_last = torch.ops.flashrnn.rglru_forward(*detached)
    for dh_last in (torch.randn_like(h_last), None):
        torch.library.opcheck(torch.ops.flashrnn.rglru_backward.default, (*detached, h, torch.randn_like(h), dh_last))


@pytest.mark.parametrize("cell", NEWTON_CELLS)
@pytest.mark.parametrize("backend", ["sequential", "newton"])
@pytest.mark.parametrize("with_state", [True, False])
def test_opcheck_newton(cell, backend, with_state):
    inputs, parameters, initial_state = newton_problem(cell, NEWTON_SHAPES[0], with_state=with_state)
    options = (backend, 3, 0.0, 0.0)
    torch.library.opcheck(torch.ops.flashrnn.newton_forward.default, (cell, inputs, parameters, initial_state,
                                                                      *options))
    detached = [None if t is None else t.detach() for t in (inputs, parameters, initial_state)]
    states, last_state, _ = torch.ops.flashrnn.newton_forward(cell, *detached, *options)
    for d_states, d_last in [(torch.randn_like(states), torch.randn_like(last_state)),
                             (torch.randn_like(states), None), (None, torch.randn_like(last_state))]:
        torch.library.opcheck(torch.ops.flashrnn.newton_backward.default,
                              (cell, *detached, states, d_states, d_last, *options))


@pytest.mark.parametrize("structure", ["diagonal", "2x2"])
@pytest.mark.parametrize("reverse", [False, True])
def test_opcheck_newton_reduce(structure, reverse):
    torch.library.opcheck(torch.ops.flashrnn.newton_reduce.default, (*reduce_problem(structure), reverse))


# ---- gradcheck in float64 on the CPU reference ---------------------------------------------------


@pytest.mark.parametrize("sizes", RGLRU_SHAPES)
@pytest.mark.parametrize("with_h0", [True, False])
def test_gradcheck_rglru_every_input_through_both_outputs(sizes, with_h0):
    tensors = rglru_problem(sizes, with_h0=with_h0)
    if with_h0:
        torch.autograd.gradcheck(flashrnn.rglru, tuple(tensors))
    else:
        torch.autograd.gradcheck(lambda *a: flashrnn.rglru(*a, None), tuple(tensors[:4]))


@pytest.mark.parametrize("cell", NEWTON_CELLS)
@pytest.mark.parametrize("sizes", NEWTON_SHAPES)
@pytest.mark.parametrize("backend", ["sequential", "newton", "automatic"])
def test_gradcheck_newton_every_input_through_both_outputs(cell, sizes, backend):
    """Newton's 3 iterations are exact for T <= 4 (the first step is exact, each iteration fixes one
    more); T = 5 converges to float64 precision at this scale, so its gradient is the exact one too."""
    tensors = newton_problem(cell, sizes)
    torch.autograd.gradcheck(lambda *a: flashrnn.newton(cell, *a, backend=backend), tuple(tensors))


@pytest.mark.parametrize("cell", NEWTON_CELLS)
def test_gradcheck_newton_without_initial_state(cell):
    inputs, parameters, _ = newton_problem(cell, NEWTON_SHAPES[0], with_state=False)
    torch.autograd.gradcheck(lambda i, p: flashrnn.newton(cell, i, p), (inputs, parameters))


@pytest.mark.parametrize("structure", ["diagonal", "2x2"])
@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_newton_reduce_twice(structure, reverse):
    """The reduction's backward is itself a reduction (an op call), so it has a gradient too."""
    tensors = reduce_problem(structure)
    reduce = lambda j, r: flashrnn.newton_reduce(j, r, reverse=reverse)  # noqa: E731
    torch.autograd.gradcheck(reduce, tensors)
    torch.autograd.gradgradcheck(reduce, tensors)


# ---- semantics -----------------------------------------------------------------------------------


def test_rglru_matches_the_formula():
    x, gate_a, gate_x, lambda_, h0 = rglru_problem((2, 3, 4), requires_grad=False)
    h, h_last = flashrnn.rglru(x, gate_a, gate_x, lambda_, h0)
    state, expected = h0, []
    for t in range(4):
        a = torch.exp(-8 * torch.sigmoid(gate_a[..., t]) * torch.nn.functional.softplus(lambda_))
        state = a * state + torch.sqrt(1 - a * a) * torch.sigmoid(gate_x[..., t]) * x[..., t]
        expected.append(state)
    torch.testing.assert_close(h, torch.stack(expected, -1))
    torch.testing.assert_close(h_last, state)


@pytest.mark.parametrize("cell", NEWTON_CELLS)
def test_newton_converges_to_the_sequential_forward_and_reports_statistics(cell):
    tensors = newton_problem(cell, (40, 2, 3), requires_grad=False)
    exact, exact_last, exact_stats = flashrnn.newton(cell, *tensors, backend="sequential", return_statistics=True)
    states, last, stats = flashrnn.newton(cell, *tensors, backend="newton", max_iterations=20,
                                          tolerance=(1e-12, 0.0), return_statistics=True)
    torch.testing.assert_close(states, exact, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(last, exact_last, rtol=1e-10, atol=1e-10)
    assert exact_stats[0] == 0 and 1 <= stats[0] <= 20 and stats[1] <= 1e-12 and stats[2] == 1 and stats[3] == 0
    torch.testing.assert_close(states[:, :, :, -1], last)


def test_flash_gru_step_by_hand():
    inputs, parameters, initial_state = newton_problem("flash_gru", (1, 2, 3), requires_grad=False)
    (states, last) = flashrnn.flash_gru(inputs, parameters, initial_state)
    h = initial_state[0]
    x_z, x_r, x_c = inputs[..., 0]
    a_z, a_r, a_c = parameters
    z, r = torch.sigmoid(a_z * h + x_z), torch.sigmoid(a_r * h + x_r)
    c = torch.tanh(a_c * h * r + x_c)
    torch.testing.assert_close(last[0], (1 - z) * h + z * c)


@pytest.mark.parametrize("reverse", [False, True])
def test_newton_reduce_diagonal_is_linrec(reverse):
    jacobians, rhs = reduce_problem("diagonal", requires_grad=False)
    torch.testing.assert_close(flashrnn.newton_reduce(jacobians, rhs, reverse=reverse)[0],
                               flashrnn.linrec(rhs[0], jacobians[0], reverse=reverse))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_narrower_dtypes_run_the_float64_reference_and_round(dtype):
    wide = [t.detach().to(dtype).double() for t in rglru_problem(RGLRU_SHAPES[0])]
    narrow = [t.to(dtype) if i < 3 else t.float() for i, t in enumerate(wide)]
    h64, last64 = flashrnn.rglru(*wide)
    h, last = flashrnn.rglru(*narrow)
    assert h.dtype == dtype and last.dtype == torch.float32
    assert torch.equal(h, h64.to(dtype)) and torch.equal(last, last64.float())
    inputs, parameters, state = (t.detach() for t in newton_problem("flash_lstm", NEWTON_SHAPES[0]))
    narrow = [inputs.to(dtype), parameters.float(), state.float()]
    states, last = flashrnn.flash_lstm(*narrow)
    states64, last64 = flashrnn.flash_lstm(*(t.double() for t in narrow))
    assert states.dtype == dtype and last.dtype == torch.float32
    assert torch.equal(states, states64.to(dtype)) and torch.equal(last, last64.float())


# ---- On the GPU: every op against the CPU float64 path -------------------------------------------

# Per dtype, relative to 1 + |value| as the C++ GPU tests (docs/kernels.md): fp32 arithmetic in both;
# bf16 rounds the tensors (and the RG-LRU's bf16 gates use the coarse sigmoid, about 3e-4).
RGLRU_TOLERANCES = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}
NEWTON_TOLERANCES = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}
# d_lambda and d_parameters sum over batch and time (atomics on the GPU): held a little looser.
SUMMED_TOLERANCES = {torch.float32: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


def _on_cpu64(tensors):
    return [None if t is None else t.detach().double().cpu().requires_grad_() for t in tensors]


def _on_cuda(tensors):
    return [None if t is None else t.detach().cuda().requires_grad_() for t in tensors]


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("sizes", [(2, 3, 5), (3, 64, 1000), (1, 8, 4097)])
@pytest.mark.parametrize("with_h0", [True, False])
def test_cuda_rglru_against_the_cpu_reference(dtype, sizes, with_h0):
    tensors = rglru_problem(sizes, dtype=dtype, requires_grad=False, with_h0=with_h0)
    cpu, gpu = _on_cpu64(tensors), _on_cuda(tensors)
    expected, actual = flashrnn.rglru(*cpu), flashrnn.rglru(*gpu)
    assert actual[0].dtype == dtype and actual[1].dtype == torch.float32
    for e, a in zip(expected, actual):
        torch.testing.assert_close(a.double().cpu(), e, **RGLRU_TOLERANCES[dtype])
    dh, dh_last = torch.randn_like(expected[0]).to(dtype).double(), torch.randn_like(expected[1])
    torch.autograd.backward(expected, (dh, dh_last))
    torch.autograd.backward(actual, (dh.to(dtype).cuda(), dh_last.float().cuda()))
    for index, (e, a) in enumerate(zip(cpu, gpu)):
        if e is not None:
            tolerance = SUMMED_TOLERANCES[dtype] if index == 3 else RGLRU_TOLERANCES[dtype]
            torch.testing.assert_close(a.grad.double().cpu(), e.grad, **tolerance)


@requires_cuda
@pytest.mark.parametrize("cell", NEWTON_CELLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("backend", ["newton", "sequential", "automatic"])
@pytest.mark.parametrize("sizes", [(5, 3, 4), (300, 2, 24), (2049, 1, 8)])
def test_cuda_newton_against_the_cpu_reference(cell, dtype, backend, sizes):
    """The GPU's backend against the CPU's same backend ('automatic' may pick Newton on the GPU: at
    the fresh scale 3 iterations meet fp32 precision, so the sequential CPU result is its oracle)."""
    tensors = newton_problem(cell, sizes, dtype=dtype, requires_grad=False)
    cpu, gpu = _on_cpu64(tensors), _on_cuda(tensors)
    cpu_backend = "newton" if backend == "newton" else "sequential"
    expected = flashrnn.newton(cell, *cpu, backend=cpu_backend)
    actual = flashrnn.newton(cell, *gpu, backend=backend, return_statistics=True)
    assert actual[0].dtype == dtype and actual[1].dtype == torch.float32
    assert actual[2][3].item() == 0  # not non-finite
    for e, a in zip(expected, actual[:2]):
        torch.testing.assert_close(a.double().cpu(), e, **NEWTON_TOLERANCES[dtype])
    d_states = torch.randn_like(expected[0]).to(dtype).double()
    d_last = torch.randn_like(expected[1])
    torch.autograd.backward(expected, (d_states, d_last))
    torch.autograd.backward(actual[:2], (d_states.to(dtype).cuda(), d_last.float().cuda()))
    for index, (e, a) in enumerate(zip(cpu, gpu)):
        tolerance = SUMMED_TOLERANCES[dtype] if index == 1 else NEWTON_TOLERANCES[dtype]
        torch.testing.assert_close(a.grad.double().cpu(), e.grad, **tolerance)


@requires_cuda
@pytest.mark.parametrize("structure", ["diagonal", "2x2"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("sequences, length", [(3, 6), (2, 100000), (700, 513)])
def test_cuda_newton_reduce_against_the_cpu_reference(structure, reverse, dtype, sequences, length):
    tensors = reduce_problem(structure, sequences, length, dtype=dtype, requires_grad=False)
    cpu, gpu = _on_cpu64(tensors), _on_cuda(tensors)
    expected = flashrnn.newton_reduce(*cpu, reverse=reverse)
    actual = flashrnn.newton_reduce(*gpu, reverse=reverse)
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.double().cpu(), expected, **NEWTON_TOLERANCES[dtype])
    upstream = torch.randn_like(expected).to(dtype)
    expected.backward(upstream.double())
    actual.backward(upstream.cuda())
    for e, a in zip(cpu, gpu):
        torch.testing.assert_close(a.grad.double().cpu(), e.grad, **NEWTON_TOLERANCES[dtype])


@requires_cuda
def test_cuda_opcheck_rglru_newton():
    tensors = rglru_problem((2, 4, 64), dtype=torch.float32, device="cuda")
    torch.library.opcheck(torch.ops.flashrnn.rglru_forward.default, tuple(tensors))
    inputs, parameters, state = newton_problem("flash_lstm", (16, 2, 8), dtype=torch.float32, device="cuda")
    torch.library.opcheck(torch.ops.flashrnn.newton_forward.default,
                          ("flash_lstm", inputs, parameters, state, "sequential", 3, 0.0, 0.0))
    torch.library.opcheck(torch.ops.flashrnn.newton_reduce.default,
                          (*reduce_problem("2x2", 3, 64, dtype=torch.float32, device="cuda"), False))


@requires_cuda
def test_cuda_ops_keep_the_current_device_and_stream():
    device, stream = torch.cuda.current_device(), torch.cuda.Stream()
    rglru_inputs = [t.detach() for t in rglru_problem((2, 4, 300), dtype=torch.float32, device="cuda")]
    newton_inputs = [t.detach() for t in newton_problem("flash_gru", (300, 2, 8), dtype=torch.float32,
                                                         device="cuda")]
    with torch.cuda.stream(stream):
        h, _ = flashrnn.rglru(*rglru_inputs)
        states, _ = flashrnn.flash_gru(*newton_inputs, backend="newton")
        assert torch.cuda.current_stream() == stream
    assert torch.cuda.current_device() == device
    stream.synchronize()
    torch.testing.assert_close(h.double().cpu(), flashrnn.rglru(*_on_cpu64(rglru_inputs))[0].detach(),
                               **RGLRU_TOLERANCES[torch.float32])
    torch.testing.assert_close(states.double().cpu(),
                               flashrnn.flash_gru(*_on_cpu64(newton_inputs), backend="newton")[0].detach(),
                               **NEWTON_TOLERANCES[torch.float32])


def _capture(run):
    """Runs `run` once (warm-up: configuration and workspace sizes), then captures it in a CUDA graph."""
    with torch.no_grad():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            run()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = run()
    return graph, captured


@requires_cuda
@pytest.mark.parametrize("op", ["rglru", "flash_gru_newton", "flash_lstm_sequential", "newton_reduce"])
def test_cuda_graph_replay(op):
    if op == "rglru":
        inputs = [t.detach() for t in rglru_problem((2, 16, 500), dtype=torch.float32, device="cuda")]
        run = lambda: flashrnn.rglru(*inputs)[0]  # noqa: E731
    elif op == "newton_reduce":
        inputs = [t.detach() for t in reduce_problem("2x2", 2, 50000, dtype=torch.float32, device="cuda")]
        run = lambda: flashrnn.newton_reduce(*inputs)  # noqa: E731
    else:
        cell, backend = op.rsplit("_", 1)
        inputs = [t.detach() for t in newton_problem(cell, (500, 2, 16), dtype=torch.float32, device="cuda")]
        run = lambda: flashrnn.newton(cell, *inputs, backend=backend)[0]  # noqa: E731
    graph, captured = _capture(run)
    inputs[0].copy_(torch.rand_like(inputs[0]) * 2 - 1)
    graph.replay()
    with torch.no_grad():
        torch.testing.assert_close(captured, run())

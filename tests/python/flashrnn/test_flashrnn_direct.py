"""The ops' direct eager path (flashrnn/_direct.py): plain eager calls bypass the dispatcher, every
other call (dispatch modes such as FakeTensorMode, torch.compile, tensor subclasses, the switch off)
goes through the registered op, and both give the same outputs and gradients."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import flashrnn
from flashrnn import _direct, _newton_ops, _ops, _rglru_ops
from test_flashrnn_ops import CELLS, problem


class _DispatcherCalled(Exception):
    pass


@pytest.fixture
def dispatcher_forbidden(monkeypatch):
    """Every DirectOp's registered op raises: a call that reaches it did not take the direct path."""
    def forbid(direct_op):
        def refuse(*args):
            raise _DispatcherCalled(str(direct_op))
        monkeypatch.setattr(direct_op, "torch_op", refuse)

    for op in (_ops.rnn_forward_direct, _ops.rnn_backward_direct, _ops.linrec_forward_direct,
               _ops.linrec_backward_direct, _newton_ops.newton_forward_direct, _newton_ops.newton_backward_direct,
               _rglru_ops.rglru_forward_direct, _rglru_ops.rglru_backward_direct):
        forbid(op)


@pytest.fixture
def through_dispatcher(monkeypatch):
    monkeypatch.setattr(_direct, "enabled", False)


def _rnn_outputs_and_gradients(cell):
    torch.manual_seed(7)
    x, R, b, s0 = problem(cell, (4, 3, 2, 3))
    states, last = flashrnn.rnn(cell, x, R, b, s0)
    weights = torch.randn_like(states)
    ((states * weights).sum() + last.sum()).backward()
    return [states.detach(), last.detach(), x.grad, R.grad, b.grad, s0.grad]


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_direct_path_equals_the_registered_op(cell, monkeypatch):
    direct = _rnn_outputs_and_gradients(cell)
    monkeypatch.setattr(_direct, "enabled", False)
    dispatched = _rnn_outputs_and_gradients(cell)
    for a, b in zip(direct, dispatched):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_eager_calls_take_the_direct_path(dispatcher_forbidden):
    x, R, b, s0 = problem("lstm", (3, 2, 1, 2))
    states, last = flashrnn.lstm(x, R, b, s0)
    states.sum().backward()  # the backward op, called from the formula, is direct as well
    assert x.grad is not None and R.grad is not None
    y = flashrnn.linrec(torch.randn(2, 5, dtype=torch.float64, requires_grad=True),
                        torch.rand(2, 5, dtype=torch.float64))
    y.sum().backward()
    inputs = torch.randn(3, 2, 4, 6, dtype=torch.float64, requires_grad=True)
    parameters = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    h, _ = flashrnn.flash_gru(inputs, parameters)
    h.sum().backward()
    assert inputs.grad is not None and parameters.grad is not None
    x = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    h, _ = flashrnn.rglru(x, torch.randn_like(x), torch.randn_like(x), torch.randn(3, dtype=torch.float64))
    h.sum().backward()
    assert x.grad is not None


def test_switched_off_every_call_goes_through_the_registered_op(dispatcher_forbidden, through_dispatcher):
    x, R, b, s0 = problem("gru", (2, 1, 1, 2))
    with pytest.raises(_DispatcherCalled):
        flashrnn.gru(x, R, b, s0)


def test_a_dispatch_mode_goes_through_the_registered_op():
    """Fake tensors have no memory: the direct path would hand their addresses to C++. Through the
    op they get the fake implementation's shapes."""
    with FakeTensorMode() as mode:
        x, R, b, s0 = (mode.from_tensor(t.detach()) for t in problem("lstm", (5, 3, 2, 4), requires_grad=False))
        states, last = flashrnn.lstm(x, R, b, s0)
    assert states.shape == (2, 6, 3, 2, 4) and last.shape == (2, 3, 2, 4)


def test_tensor_subclasses_go_through_the_registered_op(dispatcher_forbidden):
    class Tagged(torch.Tensor):
        pass

    x, R, b, s0 = problem("elman", (2, 1, 1, 2), requires_grad=False)
    with pytest.raises(_DispatcherCalled):
        flashrnn.elman(x.as_subclass(Tagged), R, b, s0)
    flashrnn.elman(x, torch.nn.Parameter(R), b, s0)  # parameters are plain tensors: direct


def test_linrec_newton_and_rglru_direct_equal_the_registered_op(monkeypatch):
    def run():
        torch.manual_seed(3)
        x = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
        c = torch.rand(3, 7, dtype=torch.float64, requires_grad=True)
        y = flashrnn.linrec(x, c, reverse=True)
        inputs = torch.randn(3, 2, 3, 5, dtype=torch.float64, requires_grad=True)
        parameters = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
        h0 = torch.randn(2, 2, 3, dtype=torch.float64, requires_grad=True)
        states, last = flashrnn.flash_lstm(inputs, parameters, h0)
        r = torch.randn(2, 3, 6, dtype=torch.float64, requires_grad=True)
        lambda_ = torch.randn(3, dtype=torch.float64, requires_grad=True)
        r0 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        hr, hr_last = flashrnn.rglru(r, torch.randn_like(r), torch.randn_like(r), lambda_, r0)
        (y.sum() + (states * torch.randn_like(states)).sum() + last.sum() + (hr * torch.randn_like(hr)).sum()
         + hr_last.sum()).backward()
        return [y.detach(), states.detach(), last.detach(), hr.detach(), x.grad, c.grad, inputs.grad, parameters.grad,
                h0.grad, r.grad, lambda_.grad, r0.grad]

    direct = run()
    monkeypatch.setattr(_direct, "enabled", False)
    for a, b in zip(direct, run()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_direct_path_errors_are_the_ops_errors():
    x, R, b, s0 = problem("lstm", (2, 1, 1, 2), requires_grad=False)
    with pytest.raises(flashrnn.ShapeError, match="recurrent_weights"):
        flashrnn.lstm(x, R.float(), b, s0)

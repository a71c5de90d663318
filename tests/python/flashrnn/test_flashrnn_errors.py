"""Bad inputs raise Python exceptions (flashrnn.ShapeError, ...) whose message, the C++ library's,
names the call and the tensor with what was expected and what came."""
import pytest
import torch

import flashrnn
from conftest import requires_cuda
from test_flashrnn_ops import problem


def lstm_inputs(device="cpu", dtype=torch.float64):
    return list(problem("lstm", (3, 2, 2, 4), dtype=dtype, device=device, requires_grad=False))


def test_the_error_hierarchy():
    for kind in (flashrnn.ShapeError, flashrnn.TilingError, flashrnn.DeviceError, flashrnn.UnsupportedError):
        assert issubclass(kind, flashrnn.Error)
    assert issubclass(flashrnn.Error, RuntimeError)


@pytest.mark.parametrize("index, name, bad_shape, message", [
    (1, "recurrent_weights", (4, 2, 4, 3),
     "recurrent_weights has shape [4, 2, 4, 3], expected [G_rec=4, NH=2, DH=4, DH=4]"),
    (2, "bias", (3, 2, 4), "bias has shape [3, 2, 4], expected [G=4, NH=2, DH=4]"),
    (3, "initial_states", (1, 2, 2, 4), "initial_states has shape [1, 2, 2, 4], expected [S=2, B=2, NH=2, DH=4]"),
    (0, "gate_inputs", (3, 2, 3, 2, 4), "gate_inputs has shape [3, 2, 3, 2, 4], expected [T=3, B=2, G_in=4, NH=2, DH=4]"),
])
def test_wrong_shapes_are_named_by_the_cpp_reference(index, name, bad_shape, message):
    inputs = lstm_inputs()
    inputs[index] = torch.randn(bad_shape, dtype=torch.float64)
    with pytest.raises(flashrnn.ShapeError, match=r"flashrnn::reference::forward\(lstm\)") as error:
        flashrnn.lstm(*inputs)
    assert message in str(error.value)


def test_gate_inputs_of_the_wrong_rank():
    inputs = lstm_inputs()
    with pytest.raises(flashrnn.ShapeError, match=r"gate_inputs: expected \[T, B, G_in=4, NH, DH\], got \[3, 2, 32\]"):
        flashrnn.lstm(inputs[0].flatten(2), *inputs[1:])


def test_mixed_dtypes_on_the_cpu():
    inputs = lstm_inputs()
    inputs[1] = inputs[1].float()
    with pytest.raises(flashrnn.ShapeError, match=r"recurrent_weights: expected torch.float64 \(the dtype of gate_inputs\), got torch.float32"):
        flashrnn.lstm(*inputs)


def test_integer_tensors_on_the_cpu():
    inputs = [t.long() for t in lstm_inputs()]
    with pytest.raises(flashrnn.ShapeError, match="gate_inputs: dtype torch.int64 is not a floating type"):
        flashrnn.lstm(*inputs)


def test_unknown_names():
    inputs = lstm_inputs()
    with pytest.raises(flashrnn.UnsupportedError, match="unknown cell 'lstn'"):
        flashrnn.rnn("lstn", *inputs)
    with pytest.raises(flashrnn.UnsupportedError, match="unknown backend 'fast'"):
        flashrnn.lstm(*inputs, backend="fast")
    with pytest.raises(flashrnn.UnsupportedError, match="unknown recurrent_gradient 'none'"):
        flashrnn.lstm(*inputs, recurrent_gradient="none")


def test_a_clip_value_that_is_not_positive_fails_in_the_backward():
    inputs = [t.requires_grad_() for t in lstm_inputs()]
    states, _ = flashrnn.lstm(*inputs, recurrent_gradient="clipped", clip_value=0.0)
    with pytest.raises(flashrnn.ShapeError, match="clip"):
        states.sum().backward()


def test_linrec_shapes():
    with pytest.raises(flashrnn.ShapeError, match=r"flashrnn.linrec: c: expected the shape of x \[2, 5\], got \[2, 4\]"):
        flashrnn.linrec(torch.randn(2, 5), torch.randn(2, 4))
    with pytest.raises(flashrnn.ShapeError, match=r"c: expected \[sequences=2, L=5\], got \[2, 4\]"):
        torch.ops.flashrnn.linrec_forward(torch.randn(2, 5), torch.randn(2, 4), False)


def test_the_layer_reports_a_wrong_state():
    layer = flashrnn.nn.LSTM(3, num_heads=2, head_dim=4)
    with pytest.raises(flashrnn.ShapeError, match=r"initial_states has shape \[1, 5, 2, 4\], expected \[S=2, B=5, NH=2, DH=4\]"):
        layer(torch.randn(7, 5, 3), torch.zeros(1, 5, 8))


@requires_cuda
def test_cuda_errors_name_the_tensor():
    inputs = lstm_inputs("cuda", torch.float32)
    bad = list(inputs)
    bad[1] = torch.randn(4, 2, 4, 3, device="cuda")
    with pytest.raises(flashrnn.ShapeError, match=r"recurrent_weights: expected \[G_rec=4, NH=2, DH=4, DH=4\] fp32, got \[4, 2, 4, 3\] fp32"):
        flashrnn.lstm(*bad)
    bad = list(inputs)
    bad[2] = inputs[2].half()
    with pytest.raises(flashrnn.ShapeError, match=r"bias: expected \[G=4, NH=2, DH=4\] fp32, got \[4, 2, 4\] fp16"):
        flashrnn.lstm(*bad)
    bad = list(inputs)
    bad[1] = inputs[1].transpose(2, 3)
    with pytest.raises(flashrnn.ShapeError, match="recurrent_weights must be dense row-major"):
        flashrnn.lstm(*bad)
    bad = list(inputs)
    bad[3] = inputs[3].cpu()
    with pytest.raises(flashrnn.ShapeError, match="initial_states is on cpu, gate_inputs on cuda:0"):
        flashrnn.lstm(*bad)
    with pytest.raises(flashrnn.ShapeError, match="gate_inputs: dtype float64 is not one FlashRNN stores"):
        flashrnn.lstm(*(t.double() for t in inputs))


# ---- RG-LRU and Newton ---------------------------------------------------------------------------


def test_rglru_bad_inputs_name_the_tensor():
    x, gate_a, gate_x = (torch.randn(2, 3, 5, dtype=torch.float64) for _ in range(3))
    lambda_, h0 = torch.randn(3, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    with pytest.raises(flashrnn.ShapeError, match=r"rglru_forward: gate_x: expected \[B=2, R=3, L=5\], got \[2, 3, 4\]"):
        flashrnn.rglru(x, gate_a, gate_x[..., :4], lambda_, h0)
    with pytest.raises(flashrnn.ShapeError, match=r"lambda: expected \[R=3\], got \[4\]"):
        flashrnn.rglru(x, gate_a, gate_x, torch.randn(4, dtype=torch.float64), h0)
    with pytest.raises(flashrnn.ShapeError, match=r"h0: expected \[B=2, R=3\], got \[3, 2\]"):
        flashrnn.rglru(x, gate_a, gate_x, lambda_, h0.t())
    with pytest.raises(flashrnn.ShapeError, match=r"x: expected \[B, R, L\], got \[6, 5\]"):
        flashrnn.rglru(x.flatten(0, 1), gate_a, gate_x, lambda_, h0)
    with pytest.raises(flashrnn.ShapeError, match=r"lambda: expected torch.float32 \(the state dtype of x's torch.bfloat16\)"):
        flashrnn.rglru(x.bfloat16(), gate_a.bfloat16(), gate_x.bfloat16(), lambda_.bfloat16(), None)


def test_newton_bad_inputs_name_the_tensor():
    inputs, parameters = torch.rand(3, 2, 4, 5, dtype=torch.float64), torch.rand(5, 4, dtype=torch.float64) - 0.5
    state = torch.zeros(2, 2, 4, dtype=torch.float64)
    with pytest.raises(flashrnn.ShapeError, match=r"flashrnn::reference::newton_sequential_forward: parameters has "
                       r"shape \[3, 4\], expected \[P=5, D=4\]"):
        flashrnn.flash_lstm(inputs, parameters[:3], state)
    with pytest.raises(flashrnn.ShapeError, match=r"initial_state has shape \[1, 2, 4\], expected \[S=2, B=2, D=4\]"):
        flashrnn.flash_lstm(inputs, parameters, state[:1], backend="newton")
    with pytest.raises(flashrnn.ShapeError, match=r"inputs: expected \[G=3, B, D, T\], got \[3, 2, 20\]"):
        flashrnn.flash_gru(inputs.flatten(2), parameters[:3])
    with pytest.raises(flashrnn.UnsupportedError, match="unknown backend 'fast'"):
        flashrnn.flash_gru(inputs, parameters[:3], backend="fast")
    with pytest.raises(flashrnn.ShapeError, match=r"flashrnn::reference::newton_forward\(flash_gru\): the iteration limit must be at "
                       r"least 1, got 0"):
        flashrnn.flash_gru(inputs, parameters[:3], backend="newton", max_iterations=0)
    with pytest.raises(flashrnn.UnsupportedError, match="unknown cell 'flash_rnn'"):
        flashrnn.newton("flash_rnn", inputs, parameters)


def test_newton_non_finite_inputs_raise_numerical_error_on_the_cpu():
    inputs = torch.rand(3, 1, 2, 4, dtype=torch.float64)
    inputs[1, 0, 1, 2] = float("nan")
    with pytest.raises(flashrnn.NumericalError, match="inputs has a non-finite value"):
        flashrnn.flash_gru(inputs, torch.zeros(3, 2, dtype=torch.float64), backend="newton")


def test_newton_reduce_bad_inputs_name_the_tensor():
    with pytest.raises(flashrnn.ShapeError, match=r"rhs: expected \[N=1 or 2, sequences, L\], got \[3, 2, 5\]"):
        flashrnn.newton_reduce(torch.rand(1, 2, 5), torch.rand(3, 2, 5))
    with pytest.raises(flashrnn.ShapeError, match="jacobians") as error:
        flashrnn.newton_reduce(torch.rand(1, 2, 5), torch.rand(2, 2, 5))
    assert "[1, 2, 5]" in str(error.value)


@requires_cuda
def test_cuda_rglru_and_newton_errors_name_the_tensor():
    x = torch.randn(2, 3, 8, device="cuda")
    lambda_, h0 = torch.randn(3, device="cuda"), torch.randn(2, 3, device="cuda")
    with pytest.raises(flashrnn.ShapeError, match="gate_a"):
        flashrnn.rglru(x, x[..., :4], x, lambda_, h0)
    with pytest.raises(flashrnn.ShapeError, match="h0 is on cpu, x on cuda:0"):
        flashrnn.rglru(x, x, x, lambda_, h0.cpu())
    with pytest.raises(flashrnn.UnsupportedError):
        flashrnn.rglru(x.half(), x.half(), x.half(), lambda_, h0)
    inputs, parameters = torch.rand(3, 2, 4, 5, device="cuda"), torch.rand(3, 4, device="cuda")
    with pytest.raises(flashrnn.ShapeError, match="parameters") as error:
        flashrnn.flash_gru(inputs, parameters[:2])
    assert "flashrnn::newton::forward(flash_gru" in str(error.value)
    with pytest.raises(flashrnn.ShapeError, match="parameters"):
        flashrnn.flash_gru(inputs, parameters.double())

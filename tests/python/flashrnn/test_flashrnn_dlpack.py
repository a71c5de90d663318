"""flashrnn.dlpack over numpy arrays on the CPU: the results equal the torch ops' and go back to numpy
without a copy; forward and backward passes are explicit."""
import numpy as np
import pytest
import torch

import flashrnn
import flashrnn.dlpack as fd


def test_lstm_forward_and_backward_over_numpy():
    rng = np.random.default_rng(0)
    T, B, NH, DH = 4, 2, 2, 3
    x = rng.standard_normal((T, B, 4, NH, DH))
    R = rng.standard_normal((4, NH, DH, DH)) / DH**0.5
    b = rng.standard_normal((4, NH, DH))
    states, last_state, cache = fd.lstm_forward(x, R, b)
    expected, expected_last = flashrnn.lstm(*(torch.from_numpy(a) for a in (x, R, b)))
    h = np.from_dlpack(states)
    np.testing.assert_array_equal(h, expected.numpy())
    np.testing.assert_array_equal(np.from_dlpack(last_state), expected_last.numpy())
    d_states = rng.standard_normal(h.shape)
    grads = fd.rnn_backward("lstm", R, states, cache, x, b, d_states, None)
    inputs = [torch.from_numpy(a).requires_grad_() for a in (x, R, b)]
    s0 = torch.zeros(2, B, NH, DH, dtype=torch.float64, requires_grad=True)
    torch.autograd.backward(flashrnn.lstm(*inputs, s0)[0], torch.from_numpy(d_states))
    for ours, theirs in zip(grads, [*inputs, s0]):
        np.testing.assert_allclose(np.from_dlpack(ours), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_the_input_memory_is_shared_not_copied():
    x = np.ones((2, 4))
    c = np.full((2, 4), 0.5)
    assert fd.as_tensor("x", x).data_ptr() == x.ctypes.data
    y = np.from_dlpack(fd.linrec_forward(x, c))
    np.testing.assert_array_equal(y[0], [1.0, 1.5, 1.75, 1.875])
    dx, dc = fd.linrec_backward(np.ones_like(y), c, y)
    assert np.from_dlpack(dx).shape == (2, 4) and np.from_dlpack(dc).shape == (2, 4)


def test_rglru_newton_and_reduce_over_numpy():
    rng = np.random.default_rng(1)
    x, gate_a, gate_x = (rng.standard_normal((2, 3, 5)) for _ in range(3))
    lambda_, h0 = rng.standard_normal(3), rng.standard_normal((2, 3))
    h, h_last = fd.rglru_forward(x, gate_a, gate_x, lambda_, h0)
    expected = flashrnn.rglru(*(torch.from_numpy(a) for a in (x, gate_a, gate_x, lambda_, h0)))
    np.testing.assert_array_equal(np.from_dlpack(h), expected[0].numpy())
    grads = fd.rglru_backward(x, gate_a, gate_x, lambda_, h0, h, np.ones((2, 3, 5)), None)
    assert [tuple(g.shape) for g in grads] == [(2, 3, 5)] * 3 + [(3,), (2, 3)]

    inputs, parameters = rng.uniform(-1, 1, (3, 2, 4, 6)), rng.uniform(-0.5, 0.5, (5, 4))
    states, last_state, statistics = fd.flash_lstm_forward(inputs, parameters, backend="newton")
    assert np.from_dlpack(statistics)[0] == 3
    exact = flashrnn.flash_lstm(torch.from_numpy(inputs), torch.from_numpy(parameters), backend="sequential")[0]
    np.testing.assert_allclose(np.from_dlpack(states), exact.numpy(), atol=1e-6)
    d_inputs, d_parameters, d_state = fd.newton_backward("flash_lstm", inputs, parameters, None, states,
                                                         np.ones(states.shape), None)
    assert d_inputs.shape == inputs.shape and d_parameters.shape == parameters.shape and d_state.shape == (2, 2, 4)

    jacobians, rhs = rng.uniform(-0.5, 0.5, (1, 2, 7)), rng.standard_normal((1, 2, 7))
    np.testing.assert_allclose(np.from_dlpack(fd.newton_reduce(jacobians, rhs))[0],
                               np.from_dlpack(fd.linrec_forward(rhs[0], jacobians[0])))


def test_a_non_dlpack_argument_is_named():
    with pytest.raises(flashrnn.ShapeError, match=r"flashrnn.dlpack: c: expected an object with __dlpack__"):
        fd.linrec_forward(np.ones((1, 3)), [[1.0, 2.0, 3.0]])

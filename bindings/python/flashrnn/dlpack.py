"""FlashRNN's framework-neutral functional API: every argument may be any ``__dlpack__`` producer
(numpy arrays on the CPU; CuPy arrays or JAX arrays on the GPU; torch tensors), every result supports
``__dlpack__`` / ``__dlpack_device__``, so the caller's framework takes it back without a copy:

    import numpy as np
    import flashrnn.dlpack as fd
    states, last_state, cache = fd.lstm_forward(gate_inputs, R, b)       # numpy float64 in
    h = np.from_dlpack(states)[0]                                          # numpy out, no copy

The inputs are imported with torch.from_dlpack (zero copy: the kernels read the producer's memory)
and the torch ops run without autograd: the passes are explicit (``*_forward`` returns what
``*_backward`` needs). The layouts, dtypes and devices are those of flashrnn.functional. On the GPU
torch.from_dlpack hands the producer torch's current stream (DLPack's stream protocol), so the
producer's pending work is ordered before the kernels, and a consumer's ``from_dlpack(result)`` does
the same the other way; nothing synchronises the device. torch is the exchange format here (the
package's ops are torch ops), not a requirement on the caller's arrays.
"""
from __future__ import annotations

from typing import Any, Optional

import torch

from . import _newton_ops, _ops, _rglru_ops  # noqa: F401  (registers the ops)
from ._core import ShapeError

__all__ = [
    "as_tensor", "rnn_forward", "rnn_backward", "lstm_forward", "gru_forward", "slstm_forward", "elman_forward",
    "linrec_forward", "linrec_backward", "rglru_forward", "rglru_backward", "newton_forward", "newton_backward",
    "flash_gru_forward", "flash_lstm_forward", "newton_reduce",
]


def as_tensor(name: str, array: Any) -> Optional[torch.Tensor]:
    """`array` as a torch tensor sharing its memory (None stays None)."""
    if array is None or isinstance(array, torch.Tensor):
        return array
    if not hasattr(array, "__dlpack__"):
        raise ShapeError(f"flashrnn.dlpack: {name}: expected an object with __dlpack__ (numpy, CuPy, JAX, torch), "
                         f"got {type(array).__name__}")
    return torch.from_dlpack(array)


def _tensors(**arrays) -> dict:
    return {name: as_tensor(name, array) for name, array in arrays.items()}


def rnn_forward(cell: str, gate_inputs, recurrent_weights, bias, initial_states=None, *, batch_first: bool = False,
                backend: str = "automatic") -> tuple:
    """(states, last_state, gate_cache) of `cell`; gate_cache (fp32, CUDA only, empty on the CPU) is what
    rnn_backward reads on the GPU."""
    t = _tensors(gate_inputs=gate_inputs, recurrent_weights=recurrent_weights, bias=bias,
                 initial_states=initial_states)
    if t["initial_states"] is None:
        _, batch, heads, head_dim = _ops.rnn_sizes(f"flashrnn.dlpack.{cell}", cell, t["gate_inputs"], batch_first)
        t["initial_states"] = t["gate_inputs"].new_zeros((_ops.CELLS[cell]["num_states"], batch, heads, head_dim))
    with torch.no_grad():
        return torch.ops.flashrnn.rnn_forward(cell, t["gate_inputs"], t["recurrent_weights"], t["bias"],
                                              t["initial_states"], batch_first, backend, "full", 0.0, True)


def rnn_backward(cell: str, recurrent_weights, states, gate_cache, gate_inputs, bias, d_states=None,
                 d_last_state=None, *, batch_first: bool = False, backend: str = "automatic",
                 recurrent_gradient: str = "full", clip_value: float = 0.0) -> tuple:
    """(d_gate_inputs, d_recurrent_weights, d_bias, d_initial_states) for the upstream gradients of the
    states and the last state (either may be None: zero)."""
    t = _tensors(recurrent_weights=recurrent_weights, states=states, gate_cache=gate_cache, gate_inputs=gate_inputs,
                 bias=bias, d_states=d_states, d_last_state=d_last_state)
    with torch.no_grad():
        return torch.ops.flashrnn.rnn_backward(cell, t["recurrent_weights"], t["states"], t["gate_cache"],
                                               t["gate_inputs"], t["bias"], t["d_states"], t["d_last_state"],
                                               batch_first, backend, recurrent_gradient, float(clip_value))


def lstm_forward(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple:
    return rnn_forward("lstm", gate_inputs, recurrent_weights, bias, initial_states, **options)


def gru_forward(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple:
    return rnn_forward("gru", gate_inputs, recurrent_weights, bias, initial_states, **options)


def slstm_forward(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple:
    return rnn_forward("slstm", gate_inputs, recurrent_weights, bias, initial_states, **options)


def elman_forward(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple:
    return rnn_forward("elman", gate_inputs, recurrent_weights, bias, initial_states, **options)


def linrec_forward(x, c, *, reverse: bool = False):
    """y [sequences, L] of y_l = c_l y_{l-1} + x_l."""
    t = _tensors(x=x, c=c)
    with torch.no_grad():
        return torch.ops.flashrnn.linrec_forward(t["x"], t["c"], reverse)


def linrec_backward(dy, c, y, *, reverse: bool = False) -> tuple:
    """(dx, dc)."""
    t = _tensors(dy=dy, c=c, y=y)
    with torch.no_grad():
        return torch.ops.flashrnn.linrec_backward(t["dy"], t["c"], t["y"], reverse)


def rglru_forward(x, gate_a, gate_x, lambda_, h0=None) -> tuple:
    """(h [B, R, L], h_last [B, R]); see flashrnn.rglru."""
    t = _tensors(x=x, gate_a=gate_a, gate_x=gate_x, lambda_=lambda_, h0=h0)
    with torch.no_grad():
        return torch.ops.flashrnn.rglru_forward(t["x"], t["gate_a"], t["gate_x"], t["lambda_"], t["h0"])


def rglru_backward(x, gate_a, gate_x, lambda_, h0, h, dh, dh_last=None) -> tuple:
    """(dx, d_gate_a, d_gate_x, d_lambda, dh0)."""
    t = _tensors(x=x, gate_a=gate_a, gate_x=gate_x, lambda_=lambda_, h0=h0, h=h, dh=dh, dh_last=dh_last)
    with torch.no_grad():
        return torch.ops.flashrnn.rglru_backward(t["x"], t["gate_a"], t["gate_x"], t["lambda_"], t["h0"], t["h"],
                                                 t["dh"], t["dh_last"])


def _tolerance(tolerance) -> tuple:
    return (0.0, 0.0) if tolerance is None else (float(tolerance[0]), float(tolerance[1]))


def newton_forward(cell: str, inputs, parameters, initial_state=None, *, backend: str = "automatic",
                   max_iterations: int = 3, tolerance=None) -> tuple:
    """(states [S, B, D, T], last_state [S, B, D], statistics float32 [4]); see flashrnn.newton."""
    t = _tensors(inputs=inputs, parameters=parameters, initial_state=initial_state)
    with torch.no_grad():
        return torch.ops.flashrnn.newton_forward(cell, t["inputs"], t["parameters"], t["initial_state"], backend,
                                                 int(max_iterations), *_tolerance(tolerance))


def flash_gru_forward(inputs, parameters, initial_state=None, **options) -> tuple:
    return newton_forward("flash_gru", inputs, parameters, initial_state, **options)


def flash_lstm_forward(inputs, parameters, initial_state=None, **options) -> tuple:
    return newton_forward("flash_lstm", inputs, parameters, initial_state, **options)


def newton_backward(cell: str, inputs, parameters, initial_state, states, d_states=None, d_last_state=None, *,
                    backend: str = "automatic", max_iterations: int = 3, tolerance=None) -> tuple:
    """(d_inputs, d_parameters, d_initial_state) at the forward's states."""
    t = _tensors(inputs=inputs, parameters=parameters, initial_state=initial_state, states=states,
                 d_states=d_states, d_last_state=d_last_state)
    with torch.no_grad():
        return torch.ops.flashrnn.newton_backward(cell, t["inputs"], t["parameters"], t["initial_state"],
                                                  t["states"], t["d_states"], t["d_last_state"], backend,
                                                  int(max_iterations), *_tolerance(tolerance))


def newton_reduce(jacobians, rhs, *, reverse: bool = False):
    """The solution [N, sequences, L] of the reduction; see flashrnn.newton_reduce."""
    t = _tensors(jacobians=jacobians, rhs=rhs)
    with torch.no_grad():
        return torch.ops.flashrnn.newton_reduce(t["jacobians"], t["rhs"], reverse)

"""FlashRNN for Python: recurrent cells (LSTM, GRU, sLSTM, Elman) and linear recurrences as torch ops
with autograd, head-wise layers in flashrnn.nn, and the C++ library's errors as Python exceptions.

    import flashrnn
    states, last_state = flashrnn.lstm(gate_inputs, recurrent_weights, bias, initial_states)
    layer = flashrnn.nn.LSTM(input_size, num_heads, head_dim)

CPU tensors run the float64 reference; CUDA tensors run the kernels on their device and the current
stream. See docs/python-flashrnn.md.
"""
from ._core import (
    DeviceError,
    Error,
    ShapeError,
    TilingError,
    UnsupportedError,
    built_with_cuda,
    cell_info,
    cells,
    cuda_device_available,
)

__version__ = "0.1.0"

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the torch ops, functional API and layers need torch; the core does not
    _torch = None

if _torch is not None:
    from . import _ops, nn  # noqa: F401  (registers torch.ops.flashrnn.*)
    from .functional import elman, gru, linrec, lstm, rnn, slstm

__all__ = [
    "Error", "ShapeError", "TilingError", "DeviceError", "UnsupportedError",
    "built_with_cuda", "cuda_device_available", "cell_info", "cells",
    "rnn", "lstm", "gru", "slstm", "elman", "linrec", "nn",
]

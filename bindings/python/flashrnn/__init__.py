"""FlashRNN for Python: recurrent cells (LSTM, GRU, sLSTM, Elman), linear recurrences, the RG-LRU and
the Newton cells (FlashGRU, FlashLSTM) with their reduction as torch ops with autograd, layers in
flashrnn.nn, a DLPack API in flashrnn.dlpack, and the C++ library's errors as Python exceptions.

    import flashrnn
    states, last_state = flashrnn.lstm(gate_inputs, recurrent_weights, bias, initial_states)
    layer = flashrnn.nn.LSTM(input_size, num_heads, head_dim)

CPU tensors run the float64 reference; CUDA tensors run the kernels on their device and the current
stream. See docs/python-flashrnn.md.
"""
from ._core import (
    DeviceError,
    Error,
    NumericalError,
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
    from . import dlpack  # noqa: F401
    from .functional import (elman, flash_gru, flash_lstm, gru, linrec, lstm, newton, newton_reduce, rglru, rnn,
                             slstm)

__all__ = [
    "Error", "ShapeError", "TilingError", "DeviceError", "UnsupportedError", "NumericalError",
    "built_with_cuda", "cuda_device_available", "cell_info", "cells",
    "rnn", "lstm", "gru", "slstm", "elman", "linrec", "rglru", "newton", "flash_gru", "flash_lstm",
    "newton_reduce", "nn", "dlpack",
]

"""The RG-LRU's torch ops (namespace ``flashrnn``), in the layout of docs/kernels.md ("RG-LRU"):

    torch.ops.flashrnn.rglru_forward(x, gate_a, gate_x, lambda_, h0) -> (h, h_last)
    torch.ops.flashrnn.rglru_backward(x, gate_a, gate_x, lambda_, h0, h, dh, dh_last)
                                      -> (dx, d_gate_a, d_gate_x, d_lambda, dh0)

x, gate_a, gate_x, h and their gradients are [B, R, L] (time contiguous; the library's rows [B*R, L]);
lambda_ is [R], h0 (optional: zero) and h_last are [B, R]. lambda_, h0, h_last and their gradients
are in the *state dtype*: float32, or float64 when x is float64 (CPU). On CUDA x is fp32 or bf16.
The CPU kernel is the C++ float64 reference; the CUDA kernel the fused scan on the current stream.
dh0 is always returned (zeros' worth of work when h0 is absent; autograd drops it).
"""
# No `from __future__ import annotations`: torch.library reads the ops' schemas from the annotations.
from typing import Optional

import torch
from torch import Tensor

from . import _core
from ._core import ShapeError
from ._direct import DirectOp
from ._ops import _check_cpu_dtypes, _check_same_device, _device_tensor, _float64, _host_tensor, _stream

CALL_FORWARD = "flashrnn::rglru::forward"
CALL_BACKWARD = "flashrnn::rglru::backward"


def state_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype of lambda, the states [B, R] and their gradients for sequences of `dtype`."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def rglru_sizes(call: str, x: Tensor) -> tuple:
    if x.dim() != 3:
        raise ShapeError(f"{call}: x: expected [B, R, L], got {list(x.shape)}")
    return tuple(x.shape)


def _check_shapes(call: str, sizes: tuple, sequences, lambda_: Tensor, states) -> None:
    batch, channels, length = sizes
    for name, t in sequences:
        if t is not None and tuple(t.shape) != sizes:
            raise ShapeError(f"{call}: {name}: expected [B={batch}, R={channels}, L={length}], got {list(t.shape)}")
    if tuple(lambda_.shape) != (channels,):
        raise ShapeError(f"{call}: lambda: expected [R={channels}], got {list(lambda_.shape)}")
    for name, t in states:
        if t is not None and tuple(t.shape) != (batch, channels):
            raise ShapeError(f"{call}: {name}: expected [B={batch}, R={channels}], got {list(t.shape)}")


def _check_state_dtypes(call: str, x: Tensor, tensors) -> None:
    expected = state_dtype(x.dtype)
    for name, t in tensors:
        if t is not None and t.dtype != expected:
            raise ShapeError(f"{call}: {name}: expected {expected} (the state dtype of x's {x.dtype}), got {t.dtype}")


def _rows(t: Tensor) -> tuple:
    """A [B, R, L] tensor as the library's rows [B*R, L] when its batch and channel strides allow it
    (any row stride); otherwise as it is, for the C++ check to name."""
    if t.dim() == 3 and t.stride(0) == t.shape[1] * t.stride(1):
        return (t.data_ptr(), _device_tensor(t)[1], [t.shape[0] * t.shape[1], t.shape[2]], [t.stride(1), t.stride(2)])
    return _device_tensor(t)


def _states(t: Optional[Tensor]) -> Optional[tuple]:
    """[B, R] states and [R] lambda as dense vectors (the library's [B*R])."""
    if t is None:
        return None
    if t.dim() == 2 and t.stride(0) == t.shape[1] and t.stride(1) == 1:
        return (t.data_ptr(), _device_tensor(t)[1], [t.numel()], [1])
    return _device_tensor(t)


# ---- forward -------------------------------------------------------------------------------------


def _rglru_forward_cpu(x: Tensor, gate_a: Tensor, gate_x: Tensor, lambda_: Tensor,
                  h0: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    call = "flashrnn::reference::rglru_forward"
    sequences = [("x", x), ("gate_a", gate_a), ("gate_x", gate_x)]
    _check_same_device(call, sequences + [("lambda", lambda_), ("h0", h0)])
    _check_cpu_dtypes(call, sequences)
    _check_state_dtypes(call, x, [("lambda", lambda_), ("h0", h0)])
    sizes = rglru_sizes(call, x)
    _check_shapes(call, sizes, sequences, lambda_, [("h0", h0)])
    inputs = [_float64(t) for t in (x, gate_a, gate_x, lambda_)]  # held: C++ reads them
    start = None if h0 is None else _float64(h0)
    h = torch.empty(sizes, dtype=torch.float64)
    h_last = torch.empty(sizes[:2], dtype=torch.float64)
    _core.reference_rglru_forward(sizes, *(_host_tensor(t) for t in inputs),
                                  None if start is None else _host_tensor(start), _host_tensor(h), _host_tensor(h_last))
    return h.to(x.dtype), h_last.to(state_dtype(x.dtype))


rglru_forward = torch.library.custom_op("flashrnn::rglru_forward", mutates_args=(), device_types="cpu")(
    _rglru_forward_cpu)


@rglru_forward.register_kernel("cuda")
def _rglru_forward_cuda(x, gate_a, gate_x, lambda_, h0):
    _check_same_device(CALL_FORWARD, [("x", x), ("gate_a", gate_a), ("gate_x", gate_x), ("lambda", lambda_),
                                      ("h0", h0)])
    sizes = rglru_sizes(CALL_FORWARD, x)
    h, h_last = _rglru_forward_fake(x, gate_a, gate_x, lambda_, h0)
    _core.rglru_forward(sizes, _rows(x), _rows(gate_a), _rows(gate_x), _states(lambda_.view(1, -1)
                                                                                 if lambda_.dim() == 1 else lambda_),
                        _states(h0), _rows(h), _states(h_last), x.device.index, _stream(x.device))
    return h, h_last


@rglru_forward.register_fake
def _rglru_forward_fake(x, gate_a, gate_x, lambda_, h0):
    sizes = rglru_sizes(CALL_FORWARD, x)
    return x.new_empty(sizes), x.new_empty(sizes[:2], dtype=state_dtype(x.dtype))


def _forward_setup_context(ctx, inputs, output):
    x, gate_a, gate_x, lambda_, h0 = inputs
    h, _ = output
    ctx.has_h0 = h0 is not None
    ctx.save_for_backward(x, gate_a, gate_x, lambda_, h0, h)


def _forward_backward_formula(ctx, dh, dh_last):
    x, gate_a, gate_x, lambda_, h0, h = ctx.saved_tensors
    dx, d_gate_a, d_gate_x, d_lambda, dh0 = rglru_backward_direct(
        x, gate_a, gate_x, lambda_, h0, h, dh.contiguous(), dh_last.contiguous())
    return dx, d_gate_a, d_gate_x, d_lambda, dh0 if ctx.has_h0 else None


rglru_forward.register_autograd(_forward_backward_formula, setup_context=_forward_setup_context)


# ---- backward ------------------------------------------------------------------------------------


def _rglru_backward_cpu(x: Tensor, gate_a: Tensor, gate_x: Tensor, lambda_: Tensor, h0: Optional[Tensor], h: Tensor,
                   dh: Tensor, dh_last: Optional[Tensor]) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    call = "flashrnn::reference::rglru_backward"
    sequences = [("x", x), ("gate_a", gate_a), ("gate_x", gate_x), ("h", h), ("dh", dh)]
    _check_same_device(call, sequences + [("lambda", lambda_), ("h0", h0), ("dh_last", dh_last)])
    _check_cpu_dtypes(call, sequences)
    _check_state_dtypes(call, x, [("lambda", lambda_), ("h0", h0), ("dh_last", dh_last)])
    sizes = rglru_sizes(call, x)
    _check_shapes(call, sizes, sequences, lambda_, [("h0", h0), ("dh_last", dh_last)])
    inputs = [_float64(t) for t in (x, gate_a, gate_x, lambda_)]
    start, ends = (None if t is None else _float64(t) for t in (h0, dh_last))
    h64, dh64 = _float64(h), _float64(dh)
    outputs = [torch.empty(sizes, dtype=torch.float64) for _ in range(3)]
    outputs += [torch.empty(sizes[1:2], dtype=torch.float64), torch.empty(sizes[:2], dtype=torch.float64)]
    _core.reference_rglru_backward(sizes, *(_host_tensor(t) for t in inputs),
                                   None if start is None else _host_tensor(start), _host_tensor(h64),
                                   _host_tensor(dh64), None if ends is None else _host_tensor(ends),
                                   *(_host_tensor(t) for t in outputs))
    states = state_dtype(x.dtype)
    return (*(t.to(x.dtype) for t in outputs[:3]), outputs[3].to(states), outputs[4].to(states))


rglru_backward = torch.library.custom_op("flashrnn::rglru_backward", mutates_args=(), device_types="cpu")(
    _rglru_backward_cpu)


@rglru_backward.register_kernel("cuda")
def _rglru_backward_cuda(x, gate_a, gate_x, lambda_, h0, h, dh, dh_last):
    _check_same_device(CALL_BACKWARD, [("x", x), ("gate_a", gate_a), ("gate_x", gate_x), ("lambda", lambda_),
                                       ("h0", h0), ("h", h), ("dh", dh), ("dh_last", dh_last)])
    sizes = rglru_sizes(CALL_BACKWARD, x)
    dx, d_gate_a, d_gate_x, d_lambda, dh0 = _rglru_backward_fake(x, gate_a, gate_x, lambda_, h0, h, dh, dh_last)
    _core.rglru_backward(sizes, _rows(x), _rows(gate_a), _rows(gate_x),
                         _states(lambda_.view(1, -1) if lambda_.dim() == 1 else lambda_), _states(h0), _rows(h),
                         _rows(dh), _states(dh_last), _rows(dx), _rows(d_gate_a), _rows(d_gate_x),
                         _states(d_lambda.view(1, -1)), _states(dh0), x.device.index, _stream(x.device))
    return dx, d_gate_a, d_gate_x, d_lambda, dh0


@rglru_backward.register_fake
def _rglru_backward_fake(x, gate_a, gate_x, lambda_, h0, h, dh, dh_last):
    sizes = rglru_sizes(CALL_BACKWARD, x)
    states = state_dtype(x.dtype)
    return (x.new_empty(sizes), x.new_empty(sizes), x.new_empty(sizes),
            x.new_empty(sizes[1:2], dtype=states), x.new_empty(sizes[:2], dtype=states))


rglru_forward_direct = DirectOp("rglru_forward", {"cpu": _rglru_forward_cpu, "cuda": _rglru_forward_cuda},
                                _forward_setup_context, _forward_backward_formula)
rglru_backward_direct = DirectOp("rglru_backward", {"cpu": _rglru_backward_cpu, "cuda": _rglru_backward_cuda})

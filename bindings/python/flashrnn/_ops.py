"""The torch ops of FlashRNN, registered with torch.library (namespace ``flashrnn``).

Each op has a CPU kernel (the C++ float64 reference: inputs are widened to float64, results rounded
to the inputs' dtype), a CUDA kernel (the C++ library on the tensors' device and current stream,
asynchronous), a fake implementation (shapes only, for torch.compile) and, for the forward ops, an
autograd formula that calls the matching backward op. The ops are opaque to torch.compile: the
wrappers in flashrnn.functional hold no Python-level control flow on tensor values.

    torch.ops.flashrnn.rnn_forward(cell, gate_inputs, recurrent_weights, bias, initial_states,
                                   batch_first, backend, recurrent_gradient, clip_value,
                                   keep_gate_cache) -> (states, last_state, gate_cache)
    torch.ops.flashrnn.rnn_backward(cell, recurrent_weights, states, gate_cache, gate_inputs, bias,
                                    d_states, d_last_state, batch_first, backend,
                                    recurrent_gradient, clip_value)
                                    -> (d_gate_inputs, d_recurrent_weights, d_bias, d_initial_states)
    torch.ops.flashrnn.linrec_forward(x, c, reverse) -> y
    torch.ops.flashrnn.linrec_backward(dy, c, y, reverse) -> (dx, dc)

The gate cache (the pre-activations the CUDA backward reads) exists on CUDA only; on the CPU it is an
empty tensor and the backward recomputes the gates from gate_inputs and bias, which autograd then
keeps instead.
"""
# No `from __future__ import annotations`: torch.library reads the ops' schemas from the annotations.
from typing import Optional, Sequence

import torch
from torch import Tensor

from . import _core
from ._core import ShapeError, UnsupportedError
from ._direct import DirectOp

# The cells as the C++ registry describes them: states, gates (bias rows), Wx rows, R blocks.
CELLS: dict[str, dict] = {name: _core.cell_info(name) for name in _core.cells()}
BACKENDS = ("automatic", "alternating", "fused")
RECURRENT_GRADIENTS = ("full", "clipped", "cut")

_STORAGE_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
_CPU_DTYPES = (torch.float64, torch.float32, torch.bfloat16, torch.float16)


def _dtype_name(dtype: torch.dtype) -> str:
    return _STORAGE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def _device_tensor(t: Tensor) -> tuple:
    return (t.data_ptr(), _dtype_name(t.dtype), list(t.shape), list(t.stride()))


def _optional_device_tensor(t: Optional[Tensor]) -> Optional[tuple]:
    return None if t is None else _device_tensor(t)


def _float64(t: Tensor) -> Tensor:
    return t.to(torch.float64).contiguous()


def _host_tensor(t: Tensor) -> tuple:
    """(address, sizes) of a dense float64 CPU tensor; the caller keeps `t` alive during the call."""
    return (t.data_ptr(), list(t.shape))


def _check_same_device(call: str, tensors: Sequence[tuple[str, Optional[Tensor]]]) -> None:
    first_name, first = tensors[0]
    for name, t in tensors[1:]:
        if t is not None and t.device != first.device:
            raise ShapeError(f"{call}: {name} is on {t.device}, {first_name} on {first.device}")


def _check_cpu_dtypes(call: str, tensors: Sequence[tuple[str, Optional[Tensor]]]) -> None:
    first_name, first = tensors[0]
    if first.dtype not in _CPU_DTYPES:
        raise ShapeError(f"{call}: {first_name}: dtype {first.dtype} is not a floating type the CPU reference takes")
    for name, t in tensors[1:]:
        if t is not None and t.dtype != first.dtype:
            raise ShapeError(f"{call}: {name}: expected {first.dtype} (the dtype of {first_name}), got {t.dtype}")


# torch.cuda.current_stream(device) builds a Stream object: about 10 us of host time per call on the H100
# machine's host, against well under 1 us for the raw handle (what Triton's launcher reads too).
_current_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(device: torch.device) -> int:
    if _current_raw_stream is not None:
        return _current_raw_stream(device.index if device.index is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream



def _workspace_buffer(workspace_bytes: int, device) -> torch.Tensor:
    """The scratch memory a call asks for, from torch's allocator (at least one byte, so that its pointer
    is valid even when the call needs none)."""
    return torch.empty((max(workspace_bytes, 1),), dtype=torch.uint8, device=device)

def rnn_sizes(call: str, cell: str, gate_inputs: Tensor, batch_first: bool) -> tuple:
    """(T, B, NH, DH) of the problem, read from the gate inputs [T, B, G_in, NH, DH] (batch-first
    [B, T, G_in, NH, DH]); the C++ call checks every other tensor against them."""
    if cell not in CELLS:
        raise UnsupportedError(f"{call}: unknown cell '{cell}' (valid: {', '.join(CELLS)})")
    if gate_inputs.dim() != 5:
        outer = "B, T" if batch_first else "T, B"
        raise ShapeError(
            f"{call}: gate_inputs: expected [{outer}, G_in={CELLS[cell]['num_input_gates']}, NH, DH], "
            f"got {list(gate_inputs.shape)}"
        )
    first, second, _, heads, head_dim = gate_inputs.shape
    time_steps, batch = (second, first) if batch_first else (first, second)
    return time_steps, batch, heads, head_dim


def _rnn_call(pass_name: str, cell: str) -> str:
    return f"flashrnn::rnn::{pass_name}({cell})"


# ---- rnn_forward ---------------------------------------------------------------------------------


def _rnn_forward_cpu(
    cell: str,
    gate_inputs: Tensor,
    recurrent_weights: Tensor,
    bias: Tensor,
    initial_states: Tensor,
    batch_first: bool,
    backend: str,
    recurrent_gradient: str,
    clip_value: float,
    keep_gate_cache: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    call = _rnn_call("forward", cell) + " on the CPU reference"
    named = [("gate_inputs", gate_inputs), ("recurrent_weights", recurrent_weights), ("bias", bias),
             ("initial_states", initial_states)]
    _check_same_device(call, named)
    _check_cpu_dtypes(call, named)
    sizes = rnn_sizes(call, cell, gate_inputs, batch_first)
    time_steps, batch, heads, head_dim = sizes
    states_count = CELLS[cell]["num_states"]
    states = torch.empty((states_count, time_steps + 1, batch, heads, head_dim), dtype=torch.float64)
    last_state = torch.empty((states_count, batch, heads, head_dim), dtype=torch.float64)
    inputs = [_float64(t) for t in (gate_inputs, recurrent_weights, bias, initial_states)]  # held: C++ reads them
    _core.reference_rnn_forward(cell, sizes, batch_first, *(_host_tensor(t) for t in inputs),
                                _host_tensor(states), _host_tensor(last_state))
    dtype = gate_inputs.dtype
    return states.to(dtype), last_state.to(dtype), torch.empty((0,), dtype=torch.float32)


rnn_forward = torch.library.custom_op("flashrnn::rnn_forward", mutates_args=(), device_types="cpu")(_rnn_forward_cpu)


@rnn_forward.register_kernel("cuda")
def _rnn_forward_cuda(cell, gate_inputs, recurrent_weights, bias, initial_states, batch_first, backend,
                      recurrent_gradient, clip_value, keep_gate_cache):
    call = _rnn_call("forward", cell)
    _check_same_device(call, [("gate_inputs", gate_inputs), ("recurrent_weights", recurrent_weights),
                              ("bias", bias), ("initial_states", initial_states)])
    sizes = rnn_sizes(call, cell, gate_inputs, batch_first)
    device = gate_inputs.device
    states, last_state, gate_cache = _rnn_forward_outputs(cell, gate_inputs, batch_first, keep_gate_cache)
    dtype = _dtype_name(gate_inputs.dtype)
    workspace_bytes = _core.rnn_workspace_bytes(cell, dtype, sizes, batch_first, backend, False, device.index)
    workspace = _workspace_buffer(workspace_bytes, device)
    _core.rnn_forward(
        cell, sizes, batch_first, backend,
        _device_tensor(gate_inputs), _device_tensor(recurrent_weights), _device_tensor(bias),
        _device_tensor(initial_states), _device_tensor(states), _device_tensor(last_state),
        _device_tensor(gate_cache) if keep_gate_cache else None,
        workspace.data_ptr(), workspace_bytes, device.index, _stream(device),
    )
    return states, last_state, gate_cache


def _rnn_forward_outputs(cell, gate_inputs, batch_first, keep_gate_cache):
    """Empty outputs of the forward: states, last state and the gate cache (fp32, CUDA only)."""
    time_steps, batch, heads, head_dim = rnn_sizes(_rnn_call("forward", cell), cell, gate_inputs, batch_first)
    info = CELLS[cell]
    states = gate_inputs.new_empty((info["num_states"], time_steps + 1, batch, heads, head_dim))
    last_state = gate_inputs.new_empty((info["num_states"], batch, heads, head_dim))
    cache_elements = time_steps * batch * heads * head_dim * info["num_gates"]
    on_cuda = gate_inputs.device.type == "cuda"
    gate_cache = gate_inputs.new_empty((cache_elements if on_cuda and keep_gate_cache else 0,), dtype=torch.float32)
    return states, last_state, gate_cache


@rnn_forward.register_fake
def _rnn_forward_fake(cell, gate_inputs, recurrent_weights, bias, initial_states, batch_first, backend,
                      recurrent_gradient, clip_value, keep_gate_cache):
    return _rnn_forward_outputs(cell, gate_inputs, batch_first, keep_gate_cache)


def _rnn_setup_context(ctx, inputs, output):
    (cell, gate_inputs, recurrent_weights, bias, initial_states, batch_first, backend, recurrent_gradient,
     clip_value, keep_gate_cache) = inputs
    states, last_state, gate_cache = output
    ctx.mark_non_differentiable(gate_cache)
    ctx.set_materialize_grads(False)
    ctx.options = (cell, batch_first, backend, recurrent_gradient, clip_value)
    if gate_inputs.device.type == "cuda":
        # The CUDA backward reads the gate cache; gate_inputs and bias are not kept alive for it.
        ctx.save_for_backward(recurrent_weights, states, gate_cache, None, None)
    else:
        ctx.save_for_backward(recurrent_weights, states, None, gate_inputs, bias)


def _rnn_backward_formula(ctx, d_states, d_last_state, d_gate_cache):
    cell, batch_first, backend, recurrent_gradient, clip_value = ctx.options
    recurrent_weights, states, gate_cache, gate_inputs, bias = ctx.saved_tensors
    d_gate_inputs, d_recurrent_weights, d_bias, d_initial_states = rnn_backward_direct(
        cell, recurrent_weights, states, gate_cache, gate_inputs, bias,
        None if d_states is None else d_states.contiguous(),
        None if d_last_state is None else d_last_state.contiguous(),
        batch_first, backend, recurrent_gradient, clip_value,
    )
    return (None, d_gate_inputs, d_recurrent_weights, d_bias, d_initial_states, None, None, None, None, None)


rnn_forward.register_autograd(_rnn_backward_formula, setup_context=_rnn_setup_context)


# ---- rnn_backward --------------------------------------------------------------------------------


def _rnn_backward_cpu(
    cell: str,
    recurrent_weights: Tensor,
    states: Tensor,
    gate_cache: Optional[Tensor],
    gate_inputs: Optional[Tensor],
    bias: Optional[Tensor],
    d_states: Optional[Tensor],
    d_last_state: Optional[Tensor],
    batch_first: bool,
    backend: str,
    recurrent_gradient: str,
    clip_value: float,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    call = _rnn_call("backward", cell) + " on the CPU reference"
    if gate_inputs is None or bias is None:
        raise ShapeError(f"{call}: gate_inputs and bias are required (the reference recomputes the gates)")
    named = [("states", states), ("recurrent_weights", recurrent_weights), ("gate_inputs", gate_inputs),
             ("bias", bias), ("d_states", d_states), ("d_last_state", d_last_state)]
    _check_same_device(call, named)
    _check_cpu_dtypes(call, named)
    sizes = rnn_sizes(call, cell, gate_inputs, batch_first)
    inputs = [_float64(t) for t in (gate_inputs, recurrent_weights, bias, states)]
    upstream = [None if t is None else _float64(t) for t in (d_states, d_last_state)]
    outputs = [torch.empty(shape, dtype=torch.float64) for shape in _rnn_backward_shapes(cell, states, batch_first)]
    _core.reference_rnn_backward(
        cell, sizes, batch_first, *(_host_tensor(t) for t in inputs),
        *(None if t is None else _host_tensor(t) for t in upstream),
        *(_host_tensor(t) for t in outputs), recurrent_gradient, clip_value,
    )
    return tuple(t.to(states.dtype) for t in outputs)


rnn_backward = torch.library.custom_op("flashrnn::rnn_backward", mutates_args=(), device_types="cpu")(
    _rnn_backward_cpu)


def _rnn_backward_shapes(cell: str, states: Tensor, batch_first: bool) -> list[tuple]:
    """Shapes of d_gate_inputs, d_recurrent_weights, d_bias, d_initial_states, read from the states
    [S, T+1, B, NH, DH]."""
    if states.dim() != 5:
        raise ShapeError(f"{_rnn_call('backward', cell)}: states: expected [S, T+1, B, NH, DH], got {list(states.shape)}")
    info = CELLS[cell]
    num_states, steps, batch, heads, head_dim = states.shape
    outer = (batch, steps - 1) if batch_first else (steps - 1, batch)
    return [
        (*outer, info["num_input_gates"], heads, head_dim),
        (info["num_recurrent_gates"], heads, head_dim, head_dim),
        (info["num_gates"], heads, head_dim),
        (num_states, batch, heads, head_dim),
    ]


@rnn_backward.register_kernel("cuda")
def _rnn_backward_cuda(cell, recurrent_weights, states, gate_cache, gate_inputs, bias, d_states, d_last_state,
                       batch_first, backend, recurrent_gradient, clip_value):
    call = _rnn_call("backward", cell)
    _check_same_device(call, [("states", states), ("recurrent_weights", recurrent_weights),
                              ("gate_cache", gate_cache), ("d_states", d_states), ("d_last_state", d_last_state)])
    device = states.device
    outputs = [states.new_empty(shape) for shape in _rnn_backward_shapes(cell, states, batch_first)]
    sizes = rnn_sizes(call, cell, outputs[0], batch_first)
    dtype = _dtype_name(states.dtype)
    workspace_bytes = _core.rnn_workspace_bytes(cell, dtype, sizes, batch_first, backend, True, device.index)
    workspace = _workspace_buffer(workspace_bytes, device)
    present_cache = gate_cache if gate_cache is not None and gate_cache.numel() > 0 else None
    _core.rnn_backward(
        cell, sizes, batch_first, backend, recurrent_gradient, clip_value,
        _device_tensor(recurrent_weights), _device_tensor(states),
        _optional_device_tensor(present_cache),
        _optional_device_tensor(d_states), _optional_device_tensor(d_last_state),
        *(_device_tensor(t) for t in outputs),
        workspace.data_ptr(), workspace_bytes, device.index, _stream(device),
    )
    return tuple(outputs)


@rnn_backward.register_fake
def _rnn_backward_fake(cell, recurrent_weights, states, gate_cache, gate_inputs, bias, d_states, d_last_state,
                       batch_first, backend, recurrent_gradient, clip_value):
    return tuple(states.new_empty(shape) for shape in _rnn_backward_shapes(cell, states, batch_first))


rnn_forward_direct = DirectOp("rnn_forward", {"cpu": _rnn_forward_cpu, "cuda": _rnn_forward_cuda},
                              _rnn_setup_context, _rnn_backward_formula)
rnn_backward_direct = DirectOp("rnn_backward", {"cpu": _rnn_backward_cpu, "cuda": _rnn_backward_cuda})


# ---- linrec --------------------------------------------------------------------------------------


def _linrec_forward_cpu(x: Tensor, c: Tensor, reverse: bool) -> Tensor:
    call = "flashrnn::linrec::forward on the CPU reference"
    named = [("x", x), ("c", c)]
    _check_same_device(call, named)
    _check_cpu_dtypes(call, named)
    _check_rows(call, named)
    inputs = [_float64(t) for t in (x, c)]  # held here: the C++ call reads their memory
    y = torch.empty(x.shape, dtype=torch.float64)
    _core.reference_linrec_forward(*(_host_tensor(t) for t in inputs), _host_tensor(y), reverse)
    return y.to(x.dtype)


linrec_forward = torch.library.custom_op("flashrnn::linrec_forward", mutates_args=(), device_types="cpu")(
    _linrec_forward_cpu)


def _check_rows(call: str, tensors: Sequence[tuple[str, Optional[Tensor]]]) -> None:
    """linrec's tensors are rows [sequences, L] of one shape (the C++ checks say the same on CUDA)."""
    first_name, first = tensors[0]
    if first.dim() != 2:
        raise ShapeError(f"{call}: {first_name}: expected [sequences, L], got {list(first.shape)}")
    for name, t in tensors[1:]:
        if t is not None and t.shape != first.shape:
            raise ShapeError(f"{call}: {name}: expected [sequences={first.shape[0]}, L={first.shape[1]}], "
                             f"got {list(t.shape)}")


@linrec_forward.register_kernel("cuda")
def _linrec_forward_cuda(x, c, reverse):
    call = "flashrnn::linrec::forward"
    _check_same_device(call, [("x", x), ("c", c)])
    y = x.new_empty(x.shape)
    _core.linrec_forward(_device_tensor(x), _device_tensor(c), _device_tensor(y), reverse, x.device.index,
                         _stream(x.device))
    return y


@linrec_forward.register_fake
def _linrec_forward_fake(x, c, reverse):
    return x.new_empty(x.shape)


def _linrec_setup_context(ctx, inputs, output):
    x, c, reverse = inputs
    ctx.reverse = reverse
    ctx.save_for_backward(c, output)


def _linrec_backward_formula(ctx, dy):
    c, y = ctx.saved_tensors
    dx, dc = linrec_backward_direct(dy.contiguous(), c, y, ctx.reverse)
    return dx, dc, None


linrec_forward.register_autograd(_linrec_backward_formula, setup_context=_linrec_setup_context)


def _linrec_backward_cpu(dy: Tensor, c: Tensor, y: Tensor, reverse: bool) -> tuple[Tensor, Tensor]:
    call = "flashrnn::linrec::backward on the CPU reference"
    named = [("dy", dy), ("c", c), ("y", y)]
    _check_same_device(call, named)
    _check_cpu_dtypes(call, named)
    _check_rows(call, named)
    inputs = [_float64(t) for t in (dy, c, y)]  # held here: the C++ call reads their memory
    dx = torch.empty(dy.shape, dtype=torch.float64)
    dc = torch.empty(dy.shape, dtype=torch.float64)
    _core.reference_linrec_backward(*(_host_tensor(t) for t in inputs), _host_tensor(dx), _host_tensor(dc), reverse)
    return dx.to(dy.dtype), dc.to(dy.dtype)


linrec_backward = torch.library.custom_op("flashrnn::linrec_backward", mutates_args=(), device_types="cpu")(
    _linrec_backward_cpu)


@linrec_backward.register_kernel("cuda")
def _linrec_backward_cuda(dy, c, y, reverse):
    call = "flashrnn::linrec::backward"
    _check_same_device(call, [("dy", dy), ("c", c), ("y", y)])
    dx, dc = dy.new_empty(dy.shape), dy.new_empty(dy.shape)
    _core.linrec_backward(*(_device_tensor(t) for t in (dy, c, y, dx, dc)), reverse, dy.device.index,
                          _stream(dy.device))
    return dx, dc


@linrec_backward.register_fake
def _linrec_backward_fake(dy, c, y, reverse):
    return dy.new_empty(dy.shape), dy.new_empty(dy.shape)


linrec_forward_direct = DirectOp("linrec_forward", {"cpu": _linrec_forward_cpu, "cuda": _linrec_forward_cuda},
                                 _linrec_setup_context, _linrec_backward_formula)
linrec_backward_direct = DirectOp("linrec_backward", {"cpu": _linrec_backward_cpu, "cuda": _linrec_backward_cuda})

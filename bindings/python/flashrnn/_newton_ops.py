"""The Newton family's torch ops (namespace ``flashrnn``): FlashGRU / FlashLSTM solved by Newton's
method or sequentially, and the public reduction, in the layouts of docs/kernels.md ("Newton solvers"):

    torch.ops.flashrnn.newton_forward(cell, inputs, parameters, initial_state, backend, max_iterations,
                                      tolerance_absolute, tolerance_relative)
                                      -> (states, last_state, statistics)
    torch.ops.flashrnn.newton_backward(cell, inputs, parameters, initial_state, states, d_states,
                                       d_last_state, backend, max_iterations, tolerance_absolute,
                                       tolerance_relative) -> (d_inputs, d_parameters, d_initial_state)
    torch.ops.flashrnn.newton_reduce(jacobians, rhs, reverse) -> solution

inputs [G, B, D, T], states [S, B, D, T] (h_1 .. h_T), parameters [P, D], initial_state (optional:
zero) and last_state [S, B, D]. parameters, the [S, B, D] states and their gradients are in the
state dtype: float32, or float64 when inputs are float64 (CPU). statistics: float32 [4] (iterations,
largest residual, tolerance met, non-finite). A tolerance of (0, 0) is none. On the CPU the backend
'newton' and 'fused' run the float64 Newton solver (newton_solve, so the CPU matches what the GPU
iterates; the fused GPU kernel iterates tile by tile, docs/kernels.md), 'sequential' and 'automatic'
the exact sequential forward; a non-finite residual raises
flashrnn.NumericalError there, while the GPU sets the statistics' non-finite slot.

The reduction solves x_l = J_l x_{l-1} + r_l (reverse: J_l x_{l+1} + r_l) over rows:
jacobians [K, sequences, L] (K = 1 diagonal, 4 for 2x2 blocks, J[i][j] in row 2 i + j), rhs and
solution [N, sequences, L] (N = 1 or 2), one dtype; its autograd is the reverse reduction with the
shifted transposed Jacobians (itself an op call, so it is differentiable again).
"""
# No `from __future__ import annotations`: torch.library reads the ops' schemas from the annotations.
from typing import Optional

import torch
from torch import Tensor

from . import _core
from ._core import ShapeError, UnsupportedError
from ._direct import DirectOp
from ._ops import _check_cpu_dtypes, _check_same_device, _device_tensor, _float64, _host_tensor, _stream
from ._ops import _optional_device_tensor, _workspace_buffer
from ._rglru_ops import _check_state_dtypes, state_dtype

CELLS: dict[str, dict] = {name: _core.newton_cell_info(name) for name in _core.newton_cells()}
BACKENDS = ("automatic", "newton", "sequential", "fused")
STATISTICS = ("iterations", "max_residual", "tolerance_met", "non_finite")


def _call(pass_name: str, cell: str) -> str:
    return f"flashrnn::newton::{pass_name}({cell})"


def newton_sizes(call: str, cell: str, inputs: Tensor) -> tuple:
    """(T, B, D) read from the inputs [G, B, D, T]."""
    if cell not in CELLS:
        raise UnsupportedError(f"{call}: unknown cell '{cell}' (valid: {', '.join(CELLS)})")
    if inputs.dim() != 4:
        raise ShapeError(f"{call}: inputs: expected [G={CELLS[cell]['num_gates']}, B, D, T], got {list(inputs.shape)}")
    _, batch, units, time_steps = inputs.shape
    return time_steps, batch, units


def _workspace(cell, dtype, sizes, options, backward, device) -> tuple:
    workspace_bytes = _core.newton_workspace_bytes(cell, dtype, sizes, *options, backward, device.index)
    return _workspace_buffer(workspace_bytes, device), workspace_bytes


# ---- forward -------------------------------------------------------------------------------------


def _newton_forward_cpu(cell: str, inputs: Tensor, parameters: Tensor, initial_state: Optional[Tensor], backend: str,
                   max_iterations: int, tolerance_absolute: float,
                   tolerance_relative: float) -> tuple[Tensor, Tensor, Tensor]:
    call = f"flashrnn::reference::newton_forward({cell})"
    _check_same_device(call, [("inputs", inputs), ("parameters", parameters), ("initial_state", initial_state)])
    _check_cpu_dtypes(call, [("inputs", inputs)])
    _check_state_dtypes(call, inputs, [("parameters", parameters), ("initial_state", initial_state)])
    sizes = newton_sizes(call, cell, inputs)
    states, last_state, statistics = _newton_forward_fake(cell, inputs, parameters, initial_state, backend,
                                                         max_iterations, tolerance_absolute, tolerance_relative)
    states64, last64 = states.double(), last_state.double()
    held = [_float64(t) for t in (inputs, parameters)]
    start = None if initial_state is None else _float64(initial_state)
    iterations, max_residual, tolerance_met = _core.reference_newton_forward(
        cell, sizes, backend, max_iterations, tolerance_absolute, tolerance_relative,
        *(_host_tensor(t) for t in held), None if start is None else _host_tensor(start),
        _host_tensor(states64), _host_tensor(last64))
    statistics = torch.tensor([iterations, max_residual, float(tolerance_met), 0.0], dtype=torch.float32)
    return states64.to(states.dtype), last64.to(last_state.dtype), statistics


newton_forward = torch.library.custom_op("flashrnn::newton_forward", mutates_args=(), device_types="cpu")(
    _newton_forward_cpu)


@newton_forward.register_kernel("cuda")
def _newton_forward_cuda(cell, inputs, parameters, initial_state, backend, max_iterations, tolerance_absolute,
                         tolerance_relative):
    call = _call("forward", cell)
    _check_same_device(call, [("inputs", inputs), ("parameters", parameters), ("initial_state", initial_state)])
    sizes = newton_sizes(call, cell, inputs)
    states, last_state, statistics = _newton_forward_fake(cell, inputs, parameters, initial_state, backend,
                                                         max_iterations, tolerance_absolute, tolerance_relative)
    options = (backend, max_iterations, tolerance_absolute, tolerance_relative)
    workspace, workspace_bytes = _workspace(cell, _device_tensor(inputs)[1], sizes, options, False, inputs.device)
    _core.newton_forward(cell, sizes, *options, _device_tensor(inputs), _device_tensor(parameters),
                         _optional_device_tensor(initial_state), _device_tensor(states), _device_tensor(last_state),
                         _device_tensor(statistics), workspace.data_ptr(), workspace_bytes, inputs.device.index,
                         _stream(inputs.device))
    return states, last_state, statistics


@newton_forward.register_fake
def _newton_forward_fake(cell, inputs, parameters, initial_state, backend, max_iterations, tolerance_absolute,
                         tolerance_relative):
    time_steps, batch, units = newton_sizes(_call("forward", cell), cell, inputs)
    num_states = CELLS[cell]["num_states"]
    return (inputs.new_empty((num_states, batch, units, time_steps)),
            inputs.new_empty((num_states, batch, units), dtype=state_dtype(inputs.dtype)),
            inputs.new_empty((len(STATISTICS),), dtype=torch.float32))


def _forward_setup_context(ctx, inputs, output):
    (cell, x, parameters, initial_state, backend, max_iterations, tolerance_absolute, tolerance_relative) = inputs
    states, _, statistics = output
    ctx.mark_non_differentiable(statistics)
    ctx.set_materialize_grads(False)
    ctx.options = (cell, backend, max_iterations, tolerance_absolute, tolerance_relative)
    ctx.has_initial_state = initial_state is not None
    ctx.save_for_backward(x, parameters, initial_state, states)


def _forward_backward_formula(ctx, d_states, d_last_state, d_statistics):
    cell, backend, max_iterations, tolerance_absolute, tolerance_relative = ctx.options
    x, parameters, initial_state, states = ctx.saved_tensors
    d_inputs, d_parameters, d_initial_state = newton_backward_direct(
        cell, x, parameters, initial_state, states,
        None if d_states is None else d_states.contiguous(),
        None if d_last_state is None else d_last_state.contiguous(),
        backend, max_iterations, tolerance_absolute, tolerance_relative)
    return (None, d_inputs, d_parameters, d_initial_state if ctx.has_initial_state else None,
            None, None, None, None)


newton_forward.register_autograd(_forward_backward_formula, setup_context=_forward_setup_context)


# ---- backward ------------------------------------------------------------------------------------


def _newton_backward_cpu(cell: str, inputs: Tensor, parameters: Tensor, initial_state: Optional[Tensor], states: Tensor,
                    d_states: Optional[Tensor], d_last_state: Optional[Tensor], backend: str, max_iterations: int,
                    tolerance_absolute: float, tolerance_relative: float) -> tuple[Tensor, Tensor, Tensor]:
    call = f"flashrnn::reference::newton_backward({cell})"
    named = [("inputs", inputs), ("states", states), ("d_states", d_states)]
    _check_same_device(call, named + [("parameters", parameters), ("initial_state", initial_state),
                                      ("d_last_state", d_last_state)])
    _check_cpu_dtypes(call, named)
    _check_state_dtypes(call, inputs, [("parameters", parameters), ("initial_state", initial_state),
                                       ("d_last_state", d_last_state)])
    sizes = newton_sizes(call, cell, inputs)
    outputs = _newton_backward_fake(cell, inputs, parameters, initial_state, states, d_states, d_last_state,
                                    backend, max_iterations, tolerance_absolute, tolerance_relative)
    wide = [t.double() for t in outputs]
    held = [_float64(t) for t in (inputs, parameters)]
    optional = [None if t is None else _float64(t) for t in (initial_state, d_states, d_last_state)]
    states64 = _float64(states)
    _core.reference_newton_backward(
        cell, sizes, *(_host_tensor(t) for t in held), None if optional[0] is None else _host_tensor(optional[0]),
        _host_tensor(states64), *(None if t is None else _host_tensor(t) for t in optional[1:]),
        *(_host_tensor(t) for t in wide))
    return tuple(w.to(o.dtype) for w, o in zip(wide, outputs))


newton_backward = torch.library.custom_op("flashrnn::newton_backward", mutates_args=(), device_types="cpu")(
    _newton_backward_cpu)


@newton_backward.register_kernel("cuda")
def _newton_backward_cuda(cell, inputs, parameters, initial_state, states, d_states, d_last_state, backend,
                          max_iterations, tolerance_absolute, tolerance_relative):
    call = _call("backward", cell)
    _check_same_device(call, [("inputs", inputs), ("parameters", parameters), ("initial_state", initial_state),
                              ("states", states), ("d_states", d_states), ("d_last_state", d_last_state)])
    sizes = newton_sizes(call, cell, inputs)
    outputs = _newton_backward_fake(cell, inputs, parameters, initial_state, states, d_states, d_last_state,
                                    backend, max_iterations, tolerance_absolute, tolerance_relative)
    options = (backend, max_iterations, tolerance_absolute, tolerance_relative)
    workspace, workspace_bytes = _workspace(cell, _device_tensor(inputs)[1], sizes, options, True, inputs.device)
    _core.newton_backward(cell, sizes, *options, _device_tensor(inputs), _device_tensor(parameters),
                          _optional_device_tensor(initial_state), _device_tensor(states),
                          _optional_device_tensor(d_states), _optional_device_tensor(d_last_state),
                          *(_device_tensor(t) for t in outputs), workspace.data_ptr(), workspace_bytes,
                          inputs.device.index, _stream(inputs.device))
    return outputs


@newton_backward.register_fake
def _newton_backward_fake(cell, inputs, parameters, initial_state, states, d_states, d_last_state, backend,
                          max_iterations, tolerance_absolute, tolerance_relative):
    time_steps, batch, units = newton_sizes(_call("backward", cell), cell, inputs)
    info = CELLS[cell]
    states_dtype = state_dtype(inputs.dtype)
    return (inputs.new_empty(inputs.shape),
            inputs.new_empty((info["num_parameters"], units), dtype=states_dtype),
            inputs.new_empty((info["num_states"], batch, units), dtype=states_dtype))


newton_forward_direct = DirectOp("newton_forward", {"cpu": _newton_forward_cpu, "cuda": _newton_forward_cuda},
                                 _forward_setup_context, _forward_backward_formula)
newton_backward_direct = DirectOp("newton_backward", {"cpu": _newton_backward_cpu, "cuda": _newton_backward_cuda})


# ---- the reduction -------------------------------------------------------------------------------

_STRUCTURES = {1: "diagonal", 2: "2x2"}


def _structure(call: str, rhs: Tensor) -> str:
    if rhs.dim() != 3 or rhs.shape[0] not in _STRUCTURES:
        raise ShapeError(f"{call}: rhs: expected [N=1 or 2, sequences, L], got {list(rhs.shape)}")
    return _STRUCTURES[rhs.shape[0]]


@torch.library.custom_op("flashrnn::newton_reduce", mutates_args=(), device_types="cpu")
def newton_reduce(jacobians: Tensor, rhs: Tensor, reverse: bool) -> Tensor:
    call = "flashrnn::reference::newton_reduce"
    named = [("rhs", rhs), ("jacobians", jacobians)]
    _check_same_device(call, named)
    _check_cpu_dtypes(call, named)
    structure = _structure(call, rhs)
    held = [_float64(t) for t in (jacobians, rhs)]
    solution = torch.empty(rhs.shape, dtype=torch.float64)
    _core.reference_newton_reduce(structure, reverse, *(_host_tensor(t) for t in held), _host_tensor(solution))
    return solution.to(rhs.dtype)


@newton_reduce.register_kernel("cuda")
def _newton_reduce_cuda(jacobians, rhs, reverse):
    call = "flashrnn::newton::reduce"
    _check_same_device(call, [("rhs", rhs), ("jacobians", jacobians)])
    structure = _structure(call, rhs)
    solution = rhs.new_empty(rhs.shape)
    workspace_bytes = _core.newton_reduce_workspace_bytes(structure, _device_tensor(rhs), reverse, rhs.device.index)
    workspace = _workspace_buffer(workspace_bytes, rhs.device)
    _core.newton_reduce(structure, reverse, _device_tensor(jacobians), _device_tensor(rhs), _device_tensor(solution),
                        workspace.data_ptr(), workspace_bytes, rhs.device.index, _stream(rhs.device))
    return solution


@newton_reduce.register_fake
def _newton_reduce_fake(jacobians, rhs, reverse):
    return rhs.new_empty(rhs.shape)


def _reduce_setup_context(ctx, inputs, output):
    jacobians, _, reverse = inputs
    ctx.reverse = reverse
    ctx.save_for_backward(jacobians, output)


def _shift(t: Tensor, towards_start: bool) -> Tensor:
    """t moved one step along the last axis, a zero filling the vacated end: towards_start gives
    u_l = t_{l+1} (u_{L-1} = 0), else u_l = t_{l-1} (u_0 = 0)."""
    zero = torch.zeros_like(t[..., :1])
    return torch.cat([t[..., 1:], zero], -1) if towards_start else torch.cat([zero, t[..., :-1]], -1)


def _reduce_backward_formula(ctx, d_solution):
    """For x_l = J_l x_{l-1} + r_l: g = dL/dr solves g_l = J_{l+1}^T g_{l+1} + dL/dx_l (a reverse
    reduction), and dL/dJ_l[i][j] = g_l[i] x_{l-1}[j]; the reverse direction mirrors it."""
    jacobians, solution = ctx.saved_tensors
    transposed = jacobians if jacobians.shape[0] == 1 else jacobians[[0, 2, 1, 3]]
    g = torch.ops.flashrnn.newton_reduce(_shift(transposed, not ctx.reverse).contiguous(), d_solution.contiguous(),
                                         not ctx.reverse)
    previous = _shift(solution, ctx.reverse)
    d_jacobians = (g[:, None] * previous[None, :]).flatten(0, 1)
    return d_jacobians, g, None


newton_reduce.register_autograd(_reduce_backward_formula, setup_context=_reduce_setup_context)

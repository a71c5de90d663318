"""FlashRNN's functional API over torch tensors, with autograd; the layouts of docs/kernels.md.

    states, last_state = flashrnn.lstm(gate_inputs, recurrent_weights, bias, initial_states)

gate_inputs        Wx  [T, B, G_in, NH, DH]   (batch_first: [B, T, G_in, NH, DH])
recurrent_weights  R   [G_rec, NH, DH, DH]    block (g, h): row = gate unit, column = previous h unit
bias               b   [G, NH, DH]
initial_states     s0  [S, B, NH, DH]         (None: zeros)
states (returned)      [S, T+1, B, NH, DH]    index 0 along time = s0; states[0] is h
last_state (returned)  [S, B, NH, DH]         = states[:, T]

Tensors on the CPU run the float64 reference (any floating dtype); CUDA tensors (fp32, bf16, fp16)
run the kernels of `backend` on their device and the current stream. Gradients flow to every input
through both outputs.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from . import _newton_ops, _ops, _rglru_ops  # noqa: F401  (registers the ops)
from ._core import UnsupportedError

__all__ = ["rnn", "lstm", "gru", "slstm", "elman", "linrec", "rglru", "newton", "flash_gru", "flash_lstm",
           "newton_reduce"]


def _check_options(call: str, backend: str, recurrent_gradient: str) -> None:
    if backend not in _ops.BACKENDS:
        raise UnsupportedError(f"{call}: unknown backend '{backend}' (valid: {', '.join(_ops.BACKENDS)})")
    if recurrent_gradient not in _ops.RECURRENT_GRADIENTS:
        raise UnsupportedError(f"{call}: unknown recurrent_gradient '{recurrent_gradient}' "
                               f"(valid: {', '.join(_ops.RECURRENT_GRADIENTS)})")


def rnn(
    cell: str,
    gate_inputs: Tensor,
    recurrent_weights: Tensor,
    bias: Tensor,
    initial_states: Optional[Tensor] = None,
    *,
    batch_first: bool = False,
    backend: str = "automatic",
    recurrent_gradient: str = "full",
    clip_value: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Runs `cell` ('lstm', 'gru', 'slstm', 'elman') over the sequence; returns (states, last_state).

    backend: 'automatic' (per pass: fused where its kernel runs the batch in one chunk on the GPU, else
    alternating; docs/kernels.md), 'alternating' or 'fused';
    CPU tensors always run the reference. recurrent_gradient: 'full' (exact BPTT), 'clipped' (each
    element of R^T dg clamped to [-clip_value, clip_value]) or 'cut' (no gradient through R).
    """
    call = f"flashrnn.{cell}"
    _check_options(call, backend, recurrent_gradient)
    if initial_states is None:
        _, batch, heads, head_dim = _ops.rnn_sizes(call, cell, gate_inputs, batch_first)
        initial_states = gate_inputs.new_zeros((_ops.CELLS[cell]["num_states"], batch, heads, head_dim))
    keep_gate_cache = torch.is_grad_enabled() and (
        gate_inputs.requires_grad or recurrent_weights.requires_grad or bias.requires_grad
        or initial_states.requires_grad)
    states, last_state, _ = _ops.rnn_forward_direct(
        cell, gate_inputs, recurrent_weights, bias, initial_states, batch_first, backend, recurrent_gradient,
        float(clip_value), keep_gate_cache)
    return states, last_state


def lstm(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple[Tensor, Tensor]:
    """LSTM (states h, c; gates i, f, z, o, torch.nn.LSTM's order). See rnn()."""
    return rnn("lstm", gate_inputs, recurrent_weights, bias, initial_states, **options)


def gru(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple[Tensor, Tensor]:
    """GRU, torch.nn.GRU's reset-after form (state h; Wx rows r, z, n; R blocks r, z, n; bias rows r,
    z, n, hn). See rnn()."""
    return rnn("gru", gate_inputs, recurrent_weights, bias, initial_states, **options)


def slstm(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple[Tensor, Tensor]:
    """sLSTM (states h, c, n, m; gates i, f, z, o; stabilised exponential gating). See rnn()."""
    return rnn("slstm", gate_inputs, recurrent_weights, bias, initial_states, **options)


def elman(gate_inputs, recurrent_weights, bias, initial_states=None, **options) -> tuple[Tensor, Tensor]:
    """Elman RNN, h' = tanh(Wx + R h + b) (state h, one gate). See rnn()."""
    return rnn("elman", gate_inputs, recurrent_weights, bias, initial_states, **options)


def linrec(x: Tensor, c: Tensor, *, reverse: bool = False) -> Tensor:
    """y_l = c_l y_{l-1} + x_l along the last dimension (reverse: from the end), y_{-1} = 0.

    x and c have one shape [..., L]; every leading index is an independent sequence.
    """
    if x.dim() == 0:
        raise _ops.ShapeError("flashrnn.linrec: x: expected [..., L], got a scalar")
    if c.shape != x.shape:
        raise _ops.ShapeError(f"flashrnn.linrec: c: expected the shape of x {list(x.shape)}, got {list(c.shape)}")
    length = x.shape[-1]
    y = _ops.linrec_forward_direct(x.reshape(-1, length), c.reshape(-1, length), reverse)
    return y.view(x.shape)


def rglru(x: Tensor, gate_a: Tensor, gate_x: Tensor, lambda_: Tensor, h0: Optional[Tensor] = None
          ) -> tuple[Tensor, Tensor]:
    """The RG-LRU (Hawk/Griffin) fused with its gates; returns (h [B, R, L], h_last [B, R]).

    r = sigmoid(gate_a), i = sigmoid(gate_x), log a = -8 r softplus(lambda_),
    h_t = a_t h_{t-1} + sqrt(1 - a_t^2) (i_t x_t), h_{-1} = h0 (None: zero).
    x, gate_a, gate_x [B, R, L] (time last and contiguous; CUDA: fp32 or bf16); lambda_ [R] and h0
    [B, R] in float32 (float64 with float64 x). Gradients flow to every input through both outputs.
    """
    return _rglru_ops.rglru_forward_direct(x, gate_a, gate_x, lambda_, h0)


def _check_newton_options(call: str, backend: str) -> None:
    if backend not in _newton_ops.BACKENDS:
        raise UnsupportedError(f"{call}: unknown backend '{backend}' (valid: {', '.join(_newton_ops.BACKENDS)})")


def newton(
    cell: str,
    inputs: Tensor,
    parameters: Tensor,
    initial_state: Optional[Tensor] = None,
    *,
    backend: str = "automatic",
    max_iterations: int = 3,
    tolerance: Optional[tuple[float, float]] = None,
    return_statistics: bool = False,
):
    """Runs the Newton cell `cell` ('flash_gru', 'flash_lstm'); returns (states, last_state) and, with
    return_statistics, the statistics tensor float32 [4]: iterations, largest residual, tolerance met
    (1/0), non-finite (1/0), written on the device (reading them synchronises; the op does not).

    inputs [G, B, D, T] (the projections B_g x + b_g, time last), parameters [P, D], initial_state
    [S, B, D] (None: zero); states [S, B, D, T] (h_1 .. h_T), last_state [S, B, D]. parameters and the
    [S, B, D] states are float32 (float64 with float64 inputs). backend: 'newton' (Newton's method,
    max_iterations iterations, or fewer per sequence with tolerance=(absolute, relative)), 'sequential'
    (exact, one step after the other), 'automatic' (the GPU's cost model; on the CPU: sequential).
    """
    call = f"flashrnn.{cell}"
    _check_newton_options(call, backend)
    absolute, relative = (0.0, 0.0) if tolerance is None else (float(tolerance[0]), float(tolerance[1]))
    states, last_state, statistics = _newton_ops.newton_forward_direct(
        cell, inputs, parameters, initial_state, backend, int(max_iterations), absolute, relative)
    return (states, last_state, statistics) if return_statistics else (states, last_state)


def flash_gru(inputs, parameters, initial_state=None, **options):
    """FlashGRU (state h; gates z, r, c; parameters a_z, a_r, a_c). See newton()."""
    return newton("flash_gru", inputs, parameters, initial_state, **options)


def flash_lstm(inputs, parameters, initial_state=None, **options):
    """FlashLSTM, CIFG with peepholes (states h, c; gates f, z, o; parameters a_f, a_z, a_o, c_f, c_o).
    See newton()."""
    return newton("flash_lstm", inputs, parameters, initial_state, **options)


def newton_reduce(jacobians: Tensor, rhs: Tensor, *, reverse: bool = False) -> Tensor:
    """Solves x_l = J_l x_{l-1} + r_l (reverse: J_l x_{l+1} + r_l), x outside the sequence 0, for
    every row: jacobians [1, sequences, L] with rhs [1, sequences, L] (diagonal), or jacobians
    [4, sequences, L] (J[i][j] in row 2 i + j) with rhs [2, sequences, L] (2x2 blocks). Returns the
    solution, shaped as rhs; differentiable in both."""
    return torch.ops.flashrnn.newton_reduce(jacobians, rhs, reverse)

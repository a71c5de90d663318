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

from . import _ops
from ._core import UnsupportedError

__all__ = ["rnn", "lstm", "gru", "slstm", "elman", "linrec"]


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

    backend: 'automatic' (fused when it fits the GPU, else alternating), 'alternating' or 'fused';
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
    states, last_state, _ = torch.ops.flashrnn.rnn_forward(
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
    y = torch.ops.flashrnn.linrec_forward(x.reshape(-1, length), c.reshape(-1, length), reverse)
    return y.view(x.shape)

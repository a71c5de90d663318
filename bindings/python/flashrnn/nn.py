"""Head-wise recurrent layers (LSTM, GRU, SLSTM, Elman), the linear recurrences (LinRec, RGLRU) and the
Newton layers (FlashGRU, FlashLSTM).

A layer holds the input projection W [G_in * NH * DH, input_size] (no bias of its own), the
block-diagonal recurrent weights R [G_rec, NH, DH, DH] and one bias b [G, NH, DH] in the library's
layouts (docs/kernels.md); NH heads of DH units make the hidden size NH * DH.

    layer = flashrnn.nn.LSTM(input_size=32, num_heads=4, head_dim=16, batch_first=True)
    output, state = layer(x)          # x [B, T, 32] -> output [B, T, 64], state [S=2, B, 64]
    output, state = layer(x, state)   # continue from a state ([S, B, NH * DH]; state[0] is h)

`LSTM.from_torch(torch.nn.LSTM(...))` (and GRU / Elman from torch.nn.GRU / torch.nn.RNN) build a
one-head layer that computes what the torch module computes, with the same gradients.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from . import _newton_ops, _ops
from ._rglru_ops import state_dtype
from .functional import linrec, newton, rglru, rnn

__all__ = ["LSTM", "GRU", "SLSTM", "Elman", "LinRec", "RGLRU", "FlashGRU", "FlashLSTM"]


class _HeadwiseRNN(torch.nn.Module):
    cell: str = ""

    def __init__(
        self,
        input_size: int,
        num_heads: int,
        head_dim: int,
        *,
        bias: bool = True,
        batch_first: bool = False,
        backend: str = "automatic",
        recurrent_gradient: str = "full",
        clip_value: float = 0.0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        info = _ops.CELLS[self.cell]
        factory = {"device": device, "dtype": dtype}
        self.input_size, self.num_heads, self.head_dim = input_size, num_heads, head_dim
        self.num_states = info["num_states"]
        self.batch_first, self.backend = batch_first, backend
        self.recurrent_gradient, self.clip_value = recurrent_gradient, clip_value
        self.weight_ih = torch.nn.Parameter(torch.empty(info["num_input_gates"] * num_heads * head_dim, input_size,
                                                        **factory))
        self.recurrent_weights = torch.nn.Parameter(torch.empty(info["num_recurrent_gates"], num_heads, head_dim,
                                                                head_dim, **factory))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(info["num_gates"], num_heads, head_dim, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    @property
    def hidden_size(self) -> int:
        return self.num_heads * self.head_dim

    def reset_parameters(self) -> None:
        """Uniform in +-1/sqrt(hidden size), as torch.nn.LSTM."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            torch.nn.init.uniform_(p, -bound, bound)

    def extra_repr(self) -> str:
        return (f"{self.input_size}, num_heads={self.num_heads}, head_dim={self.head_dim}, "
                f"bias={self.bias is not None}, batch_first={self.batch_first}, backend='{self.backend}'")

    def forward(self, input: Tensor, state: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        """input [T, B, input_size] (batch_first: [B, T, input_size]); state [S, B, NH * DH] or None
        (zeros). Returns the hidden states over time [T, B, NH * DH] (batch_first: [B, T, ...]) and the
        last state [S, B, NH * DH]."""
        info = _ops.CELLS[self.cell]
        gate_inputs = torch.nn.functional.linear(input, self.weight_ih).unflatten(
            -1, (info["num_input_gates"], self.num_heads, self.head_dim))
        # Under autocast the projection comes out in the autocast dtype (bf16) while the parameters stay
        # float32; the op takes one dtype, so the rest follows the projection, as torch's own layers do.
        dtype = gate_inputs.dtype
        recurrent_weights = self.recurrent_weights.to(dtype)
        bias = gate_inputs.new_zeros((info["num_gates"], self.num_heads, self.head_dim)) if self.bias is None \
            else self.bias.to(dtype)
        initial_states = None if state is None else state.to(dtype).unflatten(-1, (self.num_heads, self.head_dim))
        states, last_state = rnn(self.cell, gate_inputs, recurrent_weights, bias, initial_states,
                                 batch_first=self.batch_first, backend=self.backend,
                                 recurrent_gradient=self.recurrent_gradient, clip_value=self.clip_value)
        hidden = states[0, 1:]  # [T, B, NH, DH]
        if self.batch_first:
            hidden = hidden.transpose(0, 1)
        return hidden.flatten(-2), last_state.flatten(-2)

    @classmethod
    def _from_torch_module(cls, module: torch.nn.RNNBase, bias_rows, **options):
        """A one-head layer with the torch module's weights (gate orders agree: docs/kernels.md)."""
        if module.num_layers != 1 or module.bidirectional or getattr(module, "proj_size", 0):
            raise _ops.UnsupportedError(f"flashrnn.nn.{cls.__name__}.from_torch: only one layer, one "
                                        "direction and no projection")
        hidden = module.hidden_size
        weight = module.weight_ih_l0
        layer = cls(module.input_size, 1, hidden, bias=module.bias, batch_first=module.batch_first,
                    device=weight.device, dtype=weight.dtype, **options)
        with torch.no_grad():
            layer.weight_ih.copy_(module.weight_ih_l0)
            layer.recurrent_weights.copy_(module.weight_hh_l0.view(-1, 1, hidden, hidden))
            if module.bias:
                layer.bias.copy_(torch.stack(bias_rows(module.bias_ih_l0.view(-1, hidden),
                                                       module.bias_hh_l0.view(-1, hidden))).view(-1, 1, hidden))
        return layer


class LSTM(_HeadwiseRNN):
    """Head-wise LSTM: states h, c; gates i, f, z, o (torch.nn.LSTM's i, f, g, o)."""

    cell = "lstm"

    @classmethod
    def from_torch(cls, module: torch.nn.LSTM, **options) -> "LSTM":
        """One head of hidden_size units with module's weights; bias = bias_ih + bias_hh. The torch
        state (h0, c0) is torch.cat([h0, c0]) here, and the last state's [0:1], [1:2] are h_n, c_n."""
        return cls._from_torch_module(module, lambda ih, hh: list(ih + hh), **options)


class GRU(_HeadwiseRNN):
    """Head-wise GRU in torch.nn.GRU's reset-after form: Wx rows r, z, n; bias rows r, z, n, hn."""

    cell = "gru"

    @classmethod
    def from_torch(cls, module: torch.nn.GRU, **options) -> "GRU":
        """One head with module's weights; bias rows b_ir + b_hr, b_iz + b_hz, b_in, b_hn."""
        return cls._from_torch_module(module, lambda ih, hh: [ih[0] + hh[0], ih[1] + hh[1], ih[2], hh[2]],
                                      **options)


class SLSTM(_HeadwiseRNN):
    """Head-wise sLSTM (states h, c, n, m; gates i, f, z, o), stabilised exponential gating."""

    cell = "slstm"


class Elman(_HeadwiseRNN):
    """Head-wise Elman RNN, h' = tanh(W x + R h + b)."""

    cell = "elman"

    @classmethod
    def from_torch(cls, module: torch.nn.RNN, **options) -> "Elman":
        """One head with the weights of a tanh torch.nn.RNN; bias = bias_ih + bias_hh."""
        if module.nonlinearity != "tanh":
            raise _ops.UnsupportedError("flashrnn.nn.Elman.from_torch: only nonlinearity='tanh'")
        return cls._from_torch_module(module, lambda ih, hh: list(ih + hh), **options)


class LinRec(torch.nn.Module):
    """A gated diagonal linear recurrence over `hidden_size` channels (the linear baseline of the
    state-tracking papers, minGRU's form), run by flashrnn.linrec:

        f_t = sigmoid(W_f x_t + b_f),  u_t = W_u x_t + b_u,  h_t = f_t h_{t-1} + (1 - f_t) u_t

    The decay f_t depends on the input but never on h, and lies in (0, 1): the state is a linear
    function of its past, which is what keeps such layers from tracking parity. input [B, L, input]
    (batch_first, the default) or [L, B, input]; state [B, hidden] or None (zero). Returns (h shaped as
    the input, hidden wide; the last state [B, hidden]). The op wants time last: the layer transposes to
    [B, hidden, L] and back.
    """

    def __init__(self, input_size: int, hidden_size: int, *, batch_first: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.batch_first = input_size, hidden_size, batch_first
        self.gates = torch.nn.Linear(input_size, 2 * hidden_size, device=device, dtype=dtype)  # rows f, u

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, batch_first={self.batch_first}"

    def forward(self, input: Tensor, state: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        if input.dim() != 3 or input.shape[1 if self.batch_first else 0] == 0:
            layout = "[B, L, input]" if self.batch_first else "[L, B, input]"
            raise _ops.ShapeError(f"flashrnn.nn.LinRec: input: expected {layout} with L >= 1, got "
                                  f"{list(input.shape)}")
        sequences = input if self.batch_first else input.transpose(0, 1)       # [B, L, input]
        forget, candidate = self.gates(sequences).transpose(1, 2).chunk(2, dim=1)  # [B, hidden, L] each
        decay = torch.sigmoid(forget).contiguous()
        drive = (1 - decay) * candidate
        if state is not None:  # h_0 = f_0 h_{-1} + drive_0: fold the state into the first step
            drive = torch.cat([drive[..., :1] + decay[..., :1] * state.unsqueeze(-1), drive[..., 1:]], dim=-1)
        h = linrec(drive.contiguous(), decay)
        last = h[..., -1]
        h = h.transpose(1, 2)
        return (h if self.batch_first else h.transpose(0, 1)), last


class RGLRU(torch.nn.Module):
    """The Real-Gated Linear Recurrent Unit of Hawk/Griffin over `width` channels, fused with its gates:

        gate_a = W_a x + b_a,  gate_x = W_x x + b_x,  r = sigmoid(gate_a),  i = sigmoid(gate_x)
        a_t = exp(-8 r_t softplus(lambda_)),  h_t = a_t h_{t-1} + sqrt(1 - a_t^2) (i_t x_t)

    input [B, L, width] (batch_first, the default) or [L, B, width]; state [B, width] or None (zero).
    Returns (h shaped as the input, last state [B, width]). lambda_ is initialised so that
    a = exp(-softplus(lambda_)) is uniform in [0.9, 0.999] (Griffin's a^c range). The kernel wants time
    last: the layer transposes the activations to [B, width, L] and back. lambda_ and the state are
    float32 (float64 in a float64 layer); on CUDA the activations are fp32 or bf16.
    """

    def __init__(self, width: int, *, batch_first: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.width, self.batch_first = width, batch_first
        self.gate_a = torch.nn.Linear(width, width, **factory)
        self.gate_x = torch.nn.Linear(width, width, **factory)
        self.lambda_ = torch.nn.Parameter(torch.empty(width, device=device,
                                                      dtype=state_dtype(dtype or torch.get_default_dtype())))
        self.reset_lambda()

    def reset_lambda(self) -> None:
        with torch.no_grad():
            a = torch.empty_like(self.lambda_, dtype=torch.float64).uniform_(0.9, 0.999)
            self.lambda_.copy_(torch.log(torch.expm1(-torch.log(a))))  # softplus(lambda_) = -log a

    def extra_repr(self) -> str:
        return f"{self.width}, batch_first={self.batch_first}"

    def forward(self, input: Tensor, state: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        sequences = input if self.batch_first else input.transpose(0, 1)   # [B, L, width]
        rows = lambda t: t.transpose(1, 2).contiguous()                     # noqa: E731  [B, width, L]
        states = state_dtype(input.dtype)
        h, last = rglru(rows(sequences), rows(self.gate_a(sequences)), rows(self.gate_x(sequences)),
                        self.lambda_.to(states), None if state is None else state.to(states))
        h = h.transpose(1, 2)
        return (h if self.batch_first else h.transpose(0, 1)), last


class _NewtonLayer(torch.nn.Module):
    cell: str = ""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        batch_first: bool = False,
        backend: str = "automatic",
        max_iterations: int = 3,
        tolerance: Optional[tuple[float, float]] = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        info = _newton_ops.CELLS[self.cell]
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_states, self.num_gates = info["num_states"], info["num_gates"]
        self.batch_first, self.backend = batch_first, backend
        self.max_iterations, self.tolerance = max_iterations, tolerance
        self.input_projection = torch.nn.Linear(input_size, info["num_gates"] * hidden_size, device=device,
                                                dtype=dtype)
        self.diagonals = torch.nn.Parameter(torch.empty(info["num_parameters"], hidden_size, device=device,
                                                        dtype=state_dtype(dtype or torch.get_default_dtype())))
        self.reset_diagonals()

    def reset_diagonals(self) -> None:
        """The paper's fresh initialisation (App. C.1): normal diagonals, clipped to |a| <= 0.5."""
        with torch.no_grad():
            self.diagonals.normal_(0.0, 1.0 / math.sqrt(self.hidden_size)).clamp_(-0.5, 0.5)

    def extra_repr(self) -> str:
        return (f"{self.input_size}, {self.hidden_size}, batch_first={self.batch_first}, "
                f"backend='{self.backend}', max_iterations={self.max_iterations}")

    def forward(self, input: Tensor, state: Optional[Tensor] = None,
                return_statistics: bool = False):
        """input [T, B, input_size] (batch_first: [B, T, input_size]); state [S, B, hidden] or None
        (zero). Returns h over time (shaped as the input, hidden wide), the last state [S, B, hidden]
        and, with return_statistics, the solver's statistics (float32 [4], see flashrnn.newton)."""
        projected = self.input_projection(input)                             # [.., .., G * D]
        if not self.batch_first:
            projected = projected.transpose(0, 1)                           # [B, T, G * D]
        inputs = projected.unflatten(-1, (self.num_gates, self.hidden_size)).permute(2, 0, 3, 1).contiguous()
        states = state_dtype(inputs.dtype)
        result = newton(self.cell, inputs, self.diagonals.to(states), None if state is None else state.to(states),
                        backend=self.backend, max_iterations=self.max_iterations, tolerance=self.tolerance,
                        return_statistics=return_statistics)
        hidden = result[0][0].permute(0, 2, 1)                                # [B, T, D]
        if not self.batch_first:
            hidden = hidden.transpose(0, 1)
        return (hidden, *result[1:])


class FlashGRU(_NewtonLayer):
    """FlashGRU (ParaRNN): z = sigmoid(a_z h + x_z), r = sigmoid(a_r h + x_r), c = tanh(a_c h r + x_c),
    h' = (1 - z) h + z c with diagonal a_*; x = the input projection. Solved over the sequence by
    Newton's method (or sequentially: backend)."""

    cell = "flash_gru"


class FlashLSTM(_NewtonLayer):
    """FlashLSTM (ParaRNN): a CIFG LSTM with peepholes and diagonal recurrence (states h, c)."""

    cell = "flash_lstm"

"""The single-layer models of the papers: embedding, RMSNorm, one recurrent layer of flashrnn.nn, RMSNorm,
a linear head (paper 004 appendix C.2; paper 000 section 6.3 trains the same kind of one-layer model).

For k-hop and MQAR paper 004 puts a short causal convolution (kernel 4, one filter per channel) before
the recurrent layer; `convolution=True` does that here.
"""
from __future__ import annotations

import torch

import flashrnn

MODELS = ("lstm", "slstm", "gru", "elman", "flash_gru", "flash_lstm", "linrec", "rglru")
NONLINEAR = ("lstm", "slstm", "gru", "elman", "flash_gru", "flash_lstm")
HEADWISE = {"lstm": flashrnn.nn.LSTM, "slstm": flashrnn.nn.SLSTM, "gru": flashrnn.nn.GRU, "elman": flashrnn.nn.Elman}
NEWTON = {"flash_gru": flashrnn.nn.FlashGRU, "flash_lstm": flashrnn.nn.FlashLSTM}


def recurrent_layer(name: str, hidden: int, heads: int, device: str, newton_iterations: int,
                    newton_backend: str = "newton") -> torch.nn.Module:
    """The layer of flashrnn.nn for `name`, hidden units wide, batch-first. On CUDA the head-wise cells
    run the fused kernel and FlashGRU / FlashLSTM `newton_backend` (Newton's method); on the CPU every layer runs the
    library's float64 reference (the Newton cells sequentially, which is what Newton converges to)."""
    cuda = device.startswith("cuda")
    if name in HEADWISE:
        if hidden % heads:
            raise ValueError(f"{name}: hidden {hidden} is not a multiple of heads {heads}")
        return HEADWISE[name](hidden, heads, hidden // heads, batch_first=True,
                              backend="fused" if cuda else "automatic")
    if name in NEWTON:
        return NEWTON[name](hidden, hidden, batch_first=True, backend=newton_backend if cuda else "automatic",
                            max_iterations=newton_iterations)
    if name == "linrec":
        return flashrnn.nn.LinRec(hidden, hidden)
    if name == "rglru":
        return flashrnn.nn.RGLRU(hidden)
    raise ValueError(f"unknown model '{name}' (valid: {', '.join(MODELS)})")


class CausalConvolution(torch.nn.Module):
    """Depthwise convolution over time that sees only the current and the kernel - 1 previous steps."""

    def __init__(self, channels: int, kernel: int = 4) -> None:
        super().__init__()
        self.kernel = kernel
        self.conv = torch.nn.Conv1d(channels, channels, kernel, groups=channels, padding=kernel - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:        # [B, L, C] -> [B, L, C]
        return self.conv(x.transpose(1, 2))[..., : x.shape[1]].transpose(1, 2)


class SequenceModel(torch.nn.Module):
    """tokens [B, L] -> logits [B, L, vocabulary]."""

    def __init__(self, name: str, vocabulary: int, hidden: int, *, heads: int = 4, convolution: bool = False,
                 device: str = "cpu", newton_iterations: int = 3, newton_backend: str = "newton") -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(vocabulary, hidden)
        self.norm_in = torch.nn.RMSNorm(hidden)
        self.convolution = CausalConvolution(hidden) if convolution else torch.nn.Identity()
        self.recurrent = recurrent_layer(name, hidden, heads, device, newton_iterations, newton_backend)
        self.norm_out = torch.nn.RMSNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocabulary)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.convolution(self.norm_in(self.embedding(tokens)))
        hidden = self.recurrent(x)[0]
        return self.head(self.norm_out(hidden))

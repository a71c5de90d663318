"""A small language model whose token mixing is done by flashrnn layers.

    embedding -> N x [RMSNorm, recurrent mixer, residual, RMSNorm, MLP, residual] -> RMSNorm -> head

The mixers cycle over the layers in the order given (`mixers=("slstm", "flash_gru")` alternates them):
`lstm`, `slstm`, `gru`, `elman` are the head-wise cells (NH heads of width / NH units, fused or
alternating kernels on CUDA), `flash_gru` and `flash_lstm` the Newton-solved diagonal cells. Every
weight is an ordinary nn.Parameter, so DDP and FSDP2 see them all.
"""
from __future__ import annotations

from dataclasses import dataclass

import flashrnn
import torch
from torch.utils.checkpoint import checkpoint

HEADWISE = {"lstm": flashrnn.nn.LSTM, "slstm": flashrnn.nn.SLSTM, "gru": flashrnn.nn.GRU,
            "elman": flashrnn.nn.Elman}
NEWTON = {"flash_gru": flashrnn.nn.FlashGRU, "flash_lstm": flashrnn.nn.FlashLSTM}
MIXERS = tuple(HEADWISE) + tuple(NEWTON)


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 256
    width: int = 128
    layers: int = 4
    heads: int = 4
    mixers: tuple[str, ...] = ("lstm", "slstm", "flash_gru", "flash_lstm")
    mlp_ratio: int = 4
    backend: str = "automatic"  # of the head-wise mixers: automatic, fused or alternating
    newton_backend: str = "automatic"  # of flash_gru / flash_lstm: automatic, newton or sequential
    checkpoint_blocks: bool = True  # recompute each block's activations in the backward pass

    def __post_init__(self) -> None:
        unknown = [m for m in self.mixers if m not in MIXERS]
        if unknown or not self.mixers:
            raise ValueError(f"mixers {list(self.mixers)}: each must be one of {', '.join(MIXERS)}")
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")
        for name in ("vocab_size", "width", "layers", "heads", "mlp_ratio"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")

    def mixer_of(self, layer: int) -> str:
        return self.mixers[layer % len(self.mixers)]


class RecurrentMixer(torch.nn.Module):
    """A flashrnn layer over the sequence followed by an output projection back to the width."""

    def __init__(self, kind: str, config: ModelConfig) -> None:
        super().__init__()
        width = config.width
        if kind in HEADWISE:
            self.rnn = HEADWISE[kind](width, config.heads, width // config.heads, batch_first=True,
                                      backend=config.backend)
        else:
            self.rnn = NEWTON[kind](width, width, batch_first=True, backend=config.newton_backend)
        self.output = torch.nn.Linear(width, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.rnn(x)[0]  # [B, T, width]
        return self.output(hidden)


class Block(torch.nn.Module):
    def __init__(self, kind: str, config: ModelConfig) -> None:
        super().__init__()
        width = config.width
        self.mixer_norm = torch.nn.RMSNorm(width)
        self.mixer = RecurrentMixer(kind, config)
        self.mlp_norm = torch.nn.RMSNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, config.mlp_ratio * width), torch.nn.GELU(),
                                       torch.nn.Linear(config.mlp_ratio * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.mixer_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class RecurrentLM(torch.nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embedding = torch.nn.Embedding(config.vocab_size, config.width)
        self.blocks = torch.nn.ModuleList(Block(config.mixer_of(i), config) for i in range(config.layers))
        self.norm = torch.nn.RMSNorm(config.width)
        self.head = torch.nn.Linear(config.width, config.vocab_size, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens [B, T] (int64) -> logits [B, T, vocab]."""
        x = self.embedding(tokens)
        for block in self.blocks:
            if self.config.checkpoint_blocks and torch.is_grad_enabled():
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(self.norm(x))


def next_token_loss(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting tokens[:, 1:] from tokens[:, :-1], computed in float32 or wider."""
    logits = model(tokens[:, :-1])
    if logits.dtype in (torch.bfloat16, torch.float16):
        logits = logits.float()
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())

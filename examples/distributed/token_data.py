"""Token batches without downloads: synthetic sequences, or the bytes of this repository's docs.

Every rank draws the same global batch of each step from the same seed and keeps its own rows
(rank r of W keeps rows r * B .. (r + 1) * B - 1 of W * B), so the ranks' batches concatenated are
exactly the global batch that one process would train on.
"""
from __future__ import annotations

from pathlib import Path

import torch

DOCS = Path(__file__).resolve().parents[2] / "docs"


class SyntheticTokens:
    """Sequences of a fixed random Markov chain over `vocab_size` tokens (each token has 4 likely
    successors), so that a model can learn something and the loss falls."""

    def __init__(self, vocab_size: int, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.vocab_size = vocab_size
        self.successors = torch.randint(vocab_size, (vocab_size, 4), generator=generator)

    def global_batch(self, step: int, batch: int, length: int, seed: int = 0) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        tokens = torch.empty(batch, length, dtype=torch.long)
        tokens[:, 0] = torch.randint(self.vocab_size, (batch,), generator=generator)
        choices = torch.randint(4, (batch, length), generator=generator)
        for t in range(1, length):
            tokens[:, t] = self.successors[tokens[:, t - 1], choices[:, t]]
        return tokens


class DocsBytes:
    """The bytes of docs/*.md (vocabulary 256): windows at random offsets."""

    vocab_size = 256

    def __init__(self, folder: Path = DOCS) -> None:
        files = sorted(folder.glob("*.md"))
        if not files:
            raise FileNotFoundError(f"no .md files in {folder} for --data docs")
        self.bytes = torch.frombuffer(bytearray(b"".join(f.read_bytes() for f in files)), dtype=torch.uint8)

    def global_batch(self, step: int, batch: int, length: int, seed: int = 0) -> torch.Tensor:
        if length > self.bytes.numel():
            raise ValueError(f"sequence length {length} exceeds the {self.bytes.numel()} bytes of the docs")
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        starts = torch.randint(self.bytes.numel() - length + 1, (batch,), generator=generator)
        return torch.stack([self.bytes[s:s + length] for s in starts.tolist()]).long()


def make_dataset(name: str, vocab_size: int, seed: int = 0):
    if name == "synthetic":
        return SyntheticTokens(vocab_size, seed)
    if name == "docs":
        if vocab_size != DocsBytes.vocab_size:
            raise ValueError(f"--data docs is bytes: it needs --vocab 256, got {vocab_size}")
        return DocsBytes()
    raise ValueError(f"unknown data '{name}' (synthetic or docs)")


def rank_rows(global_batch: torch.Tensor, rank: int, world_size: int) -> torch.Tensor:
    """This rank's rows of the global batch."""
    if global_batch.shape[0] % world_size:
        raise ValueError(f"global batch {global_batch.shape[0]} does not split over {world_size} ranks")
    local = global_batch.shape[0] // world_size
    return global_batch[rank * local:(rank + 1) * local]

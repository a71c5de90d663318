"""Synthetic state-tracking and recall tasks: parity, k-hop and MQAR, as batches of torch tensors.

Every generator takes a torch.Generator (deterministic from its seed) and returns (tokens, targets),
both int64 [batch, length]: the model reads tokens and predicts targets at every position; a target of
IGNORE (-100, torch's cross_entropy ignore_index) is not scored.

- Parity (paper 000 appendix K; paper 004 appendix C.2): tokens in {0, 1}; the target at position l
  is the parity of tokens 0..l. Each position is therefore the parity task at length l + 1, so a
  training sequence of length 40 holds one example of every length 1..40 (the paper's "lengths up to
  40, sampled uniformly"). Evaluation scores the last position only: the parity of the whole
  sequence, at lengths 40..256.
- k-hop induction heads (paper 004 appendix C.2, k = 2, |V| = 5, L = 100; the definition of Sanford,
  Hsu and Telgarsky 2024): find(l) is the position right after the latest earlier occurrence of
  tokens[l] (j - 1 < l with tokens[j - 1] == tokens[l], the largest such j); the k-hop target is
  tokens[find^k(l)], where each hop starts from the position the previous one reached. Positions
  whose chain has no earlier occurrence are not scored.
- MQAR, multi-query associative recall (paper 004 appendix C.2, kappa = 2 pairs, |V| = 128, L = 100;
  Arora et al. 2023): keys are tokens 0..63, values 64..127. The sequence opens with kappa pairs
  (key, value) of distinct keys, then every later position is a query with probability 1/4 (one of
  the kappa keys, target its value) and otherwise noise (a random value token, not scored).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

IGNORE = -100


def parity(batch: int, length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """tokens in {0, 1}; targets[:, l] = parity of tokens[:, :l + 1]."""
    tokens = torch.randint(0, 2, (batch, length), generator=generator)
    return tokens, tokens.cumsum(1) % 2


def k_hop(batch: int, length: int, generator: torch.Generator, *, hops: int = 2,
          vocabulary: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    """tokens uniform in [0, vocabulary); targets[:, l] = tokens[find^hops(l)] or IGNORE."""
    tokens = torch.randint(0, vocabulary, (batch, length), generator=generator)
    # after[b, l]: find(l) = 1 + the latest j < l with tokens[b, j] == tokens[b, l], or -1 (none)
    after = torch.full((batch, length), -1, dtype=torch.long)
    latest = torch.full((batch, vocabulary), -1, dtype=torch.long)
    rows = torch.arange(batch)
    for position in range(length):
        seen = latest[rows, tokens[:, position]]
        after[:, position] = torch.where(seen >= 0, seen + 1, -1)
        latest[rows, tokens[:, position]] = position
    reached = torch.arange(length).expand(batch, length).clone()
    for _ in range(hops):
        valid = reached >= 0
        reached = torch.where(valid, after.gather(1, reached.clamp(min=0)), -1)
    targets = torch.where(reached >= 0, tokens.gather(1, reached.clamp(min=0)), IGNORE)
    return tokens, targets


def mqar(batch: int, length: int, generator: torch.Generator, *, pairs: int = 2, vocabulary: int = 128,
         query_probability: float = 0.25) -> tuple[torch.Tensor, torch.Tensor]:
    """kappa (key, value) pairs, then queries of those keys among noise; targets = the queried values."""
    half = vocabulary // 2
    if length < 2 * pairs + 1 or pairs > half:
        raise ValueError(f"mqar: length {length} must exceed 2 * pairs = {2 * pairs} and pairs must be at "
                         f"most {half} (the number of keys)")
    keys = torch.rand(batch, half, generator=generator).argsort(1)[:, :pairs]          # distinct keys
    values = torch.randint(half, vocabulary, (batch, pairs), generator=generator)
    queries = length - 2 * pairs
    noise = torch.randint(half, vocabulary, (batch, queries), generator=generator)
    which = torch.randint(0, pairs, (batch, queries), generator=generator)
    is_query = torch.rand(batch, queries, generator=generator) < query_probability
    tokens = torch.cat([torch.stack([keys, values], 2).flatten(1),
                        torch.where(is_query, keys.gather(1, which), noise)], 1)
    targets = torch.cat([torch.full((batch, 2 * pairs), IGNORE),
                         torch.where(is_query, values.gather(1, which), IGNORE)], 1)
    return tokens, targets


@dataclass(frozen=True)
class Task:
    """A task as train.py uses it: its vocabulary, how it trains and where it is evaluated."""

    name: str
    vocabulary: int
    train_length: int
    eval_lengths: tuple[int, ...]
    score_last_only: bool   # evaluation: the last position of each sequence (parity) or every target
    convolution: bool       # paper 004 adds a short causal convolution before the mixer for recall tasks

    def batch(self, batch: int, length: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return GENERATORS[self.name](batch, length, generator)


GENERATORS = {"parity": parity, "k_hop": k_hop, "mqar": mqar}

TASKS = {
    "parity": Task("parity", 2, 40, (40, 64, 96, 128, 160, 192, 224, 256), True, False),
    "k_hop": Task("k_hop", 5, 100, (50, 100, 200), False, True),
    "mqar": Task("mqar", 128, 100, (50, 100, 200), False, True),
}

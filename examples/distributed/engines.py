"""PyTorch's own distributed engines around a model: DDP or FSDP2 (fully_shard), nothing of our own.

Launched by torchrun (RANK, WORLD_SIZE, LOCAL_RANK in the environment) or as a plain single process.
Each rank uses its own GPU (LOCAL_RANK) with NCCL, or the CPU with gloo.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel

ENGINES = ("ddp", "fsdp2")


@dataclass(frozen=True)
class Process:
    rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def start(device_type: str = "auto") -> Process:
    """Joins the process group of torchrun's launch (or makes a group of one without torchrun)."""
    if device_type == "auto":
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
    if device_type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: no CUDA device is visible")
    backend = "nccl" if device_type == "cuda" else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if device_type == "cuda" else torch.device("cpu")
    if device_type == "cuda":
        if local_rank >= torch.cuda.device_count():
            raise RuntimeError(f"LOCAL_RANK {local_rank} but only {torch.cuda.device_count()} GPUs are visible")
        torch.cuda.set_device(device)  # NCCL and the current stream belong to this rank's GPU
    if "RANK" in os.environ:
        dist.init_process_group(backend, device_id=device if device_type == "cuda" else None)
    else:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    return Process(dist.get_rank(), dist.get_world_size(), device)


def stop() -> None:
    """Leaves the group once every rank is done with it."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def exit_now(status: int) -> None:
    """Ends the process without the interpreter's teardown. With torch 2.15 and gloo, a process aborted
    there ("terminate called without an active exception", SIGABRT) after destroy_process_group in 1 of
    7 torchrun launches of a 12-line FSDP2 script without flashrnn (1 of 6 of check_gradients.py); ending
    with os._exit: 0 of 14. By then the results are printed and written."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def wrap(model: torch.nn.Module, engine: str, process: Process) -> torch.nn.Module:
    """The model under DDP, or under FSDP2 with each block sharded on its own and the root last (its
    embedding, final norm and head), so that one block's parameters are gathered at a time."""
    if engine == "ddp":
        return DistributedDataParallel(model, device_ids=[process.device] if process.device.type == "cuda"
                                       else None)
    if engine == "fsdp2":
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        return model
    raise ValueError(f"unknown engine '{engine}' ({' or '.join(ENGINES)})")


def unwrapped(model: torch.nn.Module) -> torch.nn.Module:
    return model.module if isinstance(model, DistributedDataParallel) else model


def full_gradients(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter's whole gradient by name (FSDP2's sharded DTensors gathered from all ranks)."""
    gradients = {}
    for name, parameter in unwrapped(model).named_parameters():
        grad = parameter.grad
        if grad is None:
            raise RuntimeError(f"parameter {name} got no gradient")
        gradients[name] = grad.full_tensor() if hasattr(grad, "full_tensor") else grad
    return gradients

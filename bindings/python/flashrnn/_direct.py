"""Eager calls of the torch ops without torch's dispatcher.

A call through ``torch.ops.flashrnn.*`` passes the dispatcher's Python layers of ``torch.library.custom_op``
(the autograd wrapper, the device kernel wrapper, the aliasing check): about 150 us of host time per
forward on the H100's host, more than the kernels take at small sizes (docs/python-flashrnn.md). So an
op called in plain eager mode (no torch.compile tracing, no dispatch mode such as FakeTensorMode, plain
tensors or parameters, no functorch transform) runs its device implementation directly, through a
``torch.autograd.Function`` built from the same setup-context and backward formula that the custom op
registers. Every other call takes the registered op. Both paths run the same functions, so their
results are the same (tests/python/flashrnn/test_flashrnn_direct.py).
"""
from __future__ import annotations

from typing import Callable, Optional

import torch
from torch.autograd.function import once_differentiable
from torch.utils._python_dispatch import _get_current_dispatch_mode

_PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
_is_functorch_wrapped = getattr(torch._C._functorch, "is_functorch_wrapped_tensor", lambda t: False)

# Off in tests that compare both paths, or by a user who wants every call through the dispatcher.
enabled = True


def _tensors(args) -> list:
    return [a for a in args if isinstance(a, torch.Tensor)]


def _plain(tensors: list) -> bool:
    if not enabled or torch.compiler.is_compiling() or _get_current_dispatch_mode() is not None:
        return False
    return all(type(t) in _PLAIN_TENSOR_TYPES and not _is_functorch_wrapped(t) for t in tensors)


class DirectOp:
    """The op ``torch.ops.flashrnn.<name>`` callable as ``op(*args)`` with the schema's positional
    arguments: directly in plain eager mode, else through the registered op. ``implementations`` maps
    a device type ('cpu', 'cuda') to the function registered for it; ``setup_context`` and
    ``backward`` are those given to register_autograd (None for an op without autograd, e.g. a
    backward op)."""

    def __init__(self, name: str, implementations: dict[str, Callable],
                 setup_context: Optional[Callable] = None, backward: Optional[Callable] = None):
        self.torch_op = getattr(torch.ops.flashrnn, name)
        self.implementations = implementations
        self.function = None
        if backward is not None:
            self.function = _autograd_function(name, implementations, setup_context, backward)

    def __call__(self, *args):
        tensors = _tensors(args)
        if not _plain(tensors):
            return self.torch_op(*args)
        implementation = self.implementations.get(tensors[0].device.type)
        if implementation is None:  # the op's own error for a device it has no kernel for
            return self.torch_op(*args)
        if self.function is not None and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return self.function.apply(*args)
        return implementation(*args)


def _autograd_function(name, implementations, setup_context, backward):
    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            output = implementations[_tensors(args)[0].device.type](*args)
            setup_context(ctx, args, output)
            return output

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            return backward(ctx, *grads)

    Function.__name__ = Function.__qualname__ = f"{name}_direct"
    return Function

"""flashrnn.dlpack over CuPy and JAX arrays on the GPU: zero-copy in and out, results equal to the
float64 CPU path within per-dtype tolerances, and a producer's pending work on its own stream is
ordered before the kernels (DLPack's stream protocol). Skipped, saying why, without a GPU, CuPy or JAX."""
import os

import numpy as np
import pytest
import torch

import flashrnn
import flashrnn.dlpack as fd
from conftest import requires_cuda

# JAX takes 75% of the GPU at its first use unless told otherwise; the torch ops need the rest.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

try:
    import cupy
except ImportError:
    cupy = None
try:
    import jax
    import jax.numpy as jnp
    HAS_JAX_GPU = any(d.platform == "gpu" for d in jax.devices())
except Exception:  # jax missing, or no GPU backend for it
    jax = jnp = None
    HAS_JAX_GPU = False

requires_cupy = pytest.mark.skipif(cupy is None, reason="CuPy is not installed: CuPy DLPack test skipped")
requires_jax = pytest.mark.skipif(not HAS_JAX_GPU, reason="JAX with a GPU backend is not installed: test skipped")

# Tolerances against the float64 CPU path (fp32 accumulation on the GPU in every case). The automatic
# backend may pick the fused kernels, which multiply fp32 operands as tf32 (docs/kernels.md): fp32 is
# held to about fp16's precision (seen: 2.5e-4 at T = 37).
TOLERANCE = {"float32": 2e-3, "float16": 2e-2, "bfloat16": 6e-2}


def lstm_arrays(rng, T=37, B=3, NH=2, DH=16):
    x = rng.standard_normal((T, B, 4, NH, DH))
    R = rng.standard_normal((4, NH, DH, DH)) / DH**0.5
    b = rng.standard_normal((4, NH, DH)) * 0.1
    return x, R, b


def expected_lstm(x, R, b):
    """The float64 CPU path of the same inputs (rounded to the tested dtype first)."""
    states, last = flashrnn.lstm(*(torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (x, R, b)))
    return states.numpy(), last.numpy()


@requires_cuda
@requires_cupy
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_lstm_over_cupy_zero_copy(dtype):
    rng = np.random.default_rng(3)
    host = [a.astype(dtype) for a in lstm_arrays(rng)]
    x, R, b = (cupy.asarray(a) for a in host)
    assert fd.as_tensor("x", x).data_ptr() == x.data.ptr  # the kernels read CuPy's memory
    states, last, _ = fd.lstm_forward(x, R, b)
    assert states.is_cuda and str(states.dtype) == f"torch.{dtype}"
    h = cupy.from_dlpack(states)
    assert h.data.ptr == states.data_ptr()  # and CuPy reads ours
    expected, expected_last = expected_lstm(*host)
    np.testing.assert_allclose(cupy.asnumpy(h).astype(np.float64), expected, atol=TOLERANCE[dtype], rtol=0)
    np.testing.assert_allclose(cupy.asnumpy(cupy.from_dlpack(last)).astype(np.float64), expected_last,
                               atol=TOLERANCE[dtype], rtol=0)


@requires_cuda
@requires_cupy
def test_cupy_work_pending_on_its_own_stream_is_ordered_before_the_kernels():
    """x is written by a long CuPy computation on a non-blocking stream and read at once: DLPack's
    stream handshake (torch.from_dlpack passes torch's current stream) must order it first."""
    n, length = 64, 4099
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        big = cupy.ones((4096, 4096), dtype=cupy.float32)
        for _ in range(8):  # several ms of work ahead of the write of x
            big = big @ big / 4096
        x = cupy.broadcast_to(big[0, :1], (n, length)).copy()  # every entry 1 once the work is done
        c = cupy.full((n, length), 0.5, dtype=cupy.float32)
        y = cupy.from_dlpack(fd.linrec_forward(x, c))
    stream.synchronize()
    expected = 2.0 - 0.5 ** np.arange(length)  # y_l = 0.5 y_{l-1} + 1
    np.testing.assert_allclose(cupy.asnumpy(y), np.broadcast_to(expected, (n, length)), rtol=1e-6)


@requires_cuda
@requires_cupy
def test_newton_over_cupy():
    rng = np.random.default_rng(4)
    inputs, parameters = rng.uniform(-1, 1, (3, 2, 33, 257)), rng.uniform(-0.5, 0.5, (5, 33))
    states, last, stats = fd.flash_lstm_forward(cupy.asarray(inputs, dtype=cupy.float32),
                                                cupy.asarray(parameters, dtype=cupy.float32), backend="newton")
    exact = flashrnn.flash_lstm(torch.from_numpy(inputs), torch.from_numpy(parameters), backend="sequential")[0]
    np.testing.assert_allclose(cupy.asnumpy(cupy.from_dlpack(states)), exact.numpy(), atol=1e-3)


@requires_cuda
@requires_jax
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_lstm_and_linrec_over_jax(dtype):
    rng = np.random.default_rng(5)
    host = [a.astype(np.float32) for a in lstm_arrays(rng)]
    arrays = [jax.device_put(jnp.asarray(a, dtype=dtype), jax.devices("gpu")[0]) for a in host]
    states, last, _ = fd.lstm_forward(*arrays)
    h = jax.dlpack.from_dlpack(states)
    assert h.dtype == jnp.dtype(dtype)
    rounded = [np.asarray(a.astype(jnp.float32)) for a in arrays]  # what the kernels saw
    expected, _ = expected_lstm(*rounded)
    np.testing.assert_allclose(np.asarray(h.astype(jnp.float32)), expected, atol=TOLERANCE[dtype], rtol=0)

    x = jnp.ones((5, 1031), dtype=dtype)
    c = jnp.full((5, 1031), 0.5, dtype=dtype)
    y = jax.dlpack.from_dlpack(fd.linrec_forward(x, c))
    expected = 2.0 - 0.5 ** np.arange(1031)
    np.testing.assert_allclose(np.asarray(y.astype(jnp.float32)), np.broadcast_to(expected, (5, 1031)),
                               atol=TOLERANCE[dtype])

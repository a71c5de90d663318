"""The flashrnn package's tests need torch; without it the whole run is reported as skipped (exit 77,
ctest's SKIP_RETURN_CODE) with the way to install it. GPU tests skip, saying why, without a device."""
import sys

import pytest

try:
    import torch
except ImportError:
    pytest.exit(f"torch is not importable by {sys.executable}: scripts/install-python-deps.sh installs it "
                "(scripts/test.sh does)", returncode=77)

import flashrnn

HAS_CUDA = torch.cuda.is_available() and flashrnn.built_with_cuda()
requires_cuda = pytest.mark.skipif(
    not HAS_CUDA,
    reason="no CUDA device (or flashrnn built without CUDA): GPU test skipped")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)

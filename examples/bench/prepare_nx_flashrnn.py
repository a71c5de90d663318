"""Prepares NX-AI's flashrnn (the peer of torch_layers_bench.py --nx-flashrnn) from a checkout of its
repository: copies its package directory `flashrnn/` to DEST/nx_flashrnn (its imports are relative, so
the new name does not clash with this project's `flashrnn`) and removes, from its device-query
extension, the cudaDeviceProp fields CUDA 13 no longer has (clockRate, deviceOverlap, ...): it reports
them to Python, which never reads them, and without the removal the extension does not compile with
CUDA 13 and the fused backend cannot load. Nothing of the kernels is changed.

    python examples/bench/prepare_nx_flashrnn.py PATH/TO/flashrnn-checkout .peer/nx
    python examples/bench/torch_layers_bench.py --nx-flashrnn .peer/nx
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

REMOVED_IN_CUDA_13 = ("clockRate", "deviceOverlap", "kernelExecTimeoutEnabled", "computeMode", "maxTexture1DLinear",
                      "memoryClockRate", "singleToDoublePrecisionPerfRatio", "cooperativeMultiDeviceLaunch")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    source, destination = Path(argv[0]) / "flashrnn", Path(argv[1]) / "nx_flashrnn"
    if not (source / "flashrnn" / "flashrnn.py").is_file():
        print(f"prepare_nx_flashrnn: {source} is not the package directory of NX-AI flashrnn")
        return 1
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(source, destination)
    query = destination / "flashrnn" / "gpu_info" / "gpu_info.cc"
    text = query.read_text()
    for field in REMOVED_IN_CUDA_13:
        text, count = re.subn(rf'dict\["{field}"\]\s*=\s*prop\.{field};', "", text)
        if count != 1:
            print(f"prepare_nx_flashrnn: expected one use of cudaDeviceProp::{field} in {query}, found {count}")
            return 1
    query.write_text(text)
    print(f"prepare_nx_flashrnn: {destination} ready")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

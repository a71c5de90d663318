// `flashrnn run --backend alternating|fused`: the cell on the GPU on random data, checked against the
// CPU float64 reference on the same (rounded) inputs, with the GPU's time.
#pragma once

#include "flashrnn/flashrnn.hpp"

namespace flashrnn::tools {

enum class GpuBackend { alternating, fused };

// Prints one line per pass; returns 0 when the GPU agrees with the reference within the dtype's
// tolerance, 1 otherwise. Throws std::runtime_error without a GPU (and ShapeError or
// FusedCompileError where the fused backend has no kernel for the shape).
int run_gpu_backend(GpuBackend backend, Cell cell, const ProblemShape& problem, DType dtype);

} // namespace flashrnn::tools

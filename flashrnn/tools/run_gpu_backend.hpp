// `flashrnn run --backend alternating|fused|automatic`: the cell on the GPU on random data, checked against
// the CPU float64 reference on the same (rounded) inputs, with the GPU's time.
#pragma once

#include "flashrnn/flashrnn.hpp"

namespace flashrnn::tools {

// Prints the backend of each pass (automatic: with why) and their times; returns 0 when the GPU agrees with
// the reference within the dtype's tolerance, 1 otherwise. Throws std::runtime_error without a GPU (and
// ShapeError or FusedCompileError where the fused backend has no kernel for the shape).
int run_gpu_backend(rnn::Backend backend, Cell cell, const ProblemShape& problem, DType dtype);

// `flashrnn run --cell flash_gru|flash_lstm --backend newton|sequential|automatic`: newton::forward and
// newton::backward on random data (projections in [-1, 1], parameters within the paper's clip |a| <=
// 0.5, a random initial state), checked against the float64 sequential forward and backward on the
// same rounded inputs (fp32 1e-4, bf16 2e-2 relative to the largest value), with the GPU's times.
// Returns 0 when they agree, 1 otherwise; throws std::runtime_error without a GPU.
int run_newton_gpu_backend(newton::Backend backend, const newton::Problem& problem, int iterations);

} // namespace flashrnn::tools

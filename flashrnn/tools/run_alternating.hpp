// `flashrnn run --backend alternating`: the cell on the GPU on random data, checked against the CPU
// float64 reference on the same (rounded) inputs, with the GPU's time.
#pragma once

#include "flashrnn/flashrnn.hpp"

namespace flashrnn::tools {

// Prints one line per pass; returns 0 when the GPU agrees with the reference within the dtype's
// tolerance, 1 otherwise. Throws std::runtime_error without a GPU.
int run_alternating(Cell cell, const ProblemShape& problem, DType dtype);

} // namespace flashrnn::tools

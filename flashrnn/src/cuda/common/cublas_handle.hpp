// One cuBLAS handle per thread and device, created on first use (outside of graph capture) with a
// workspace of its own, so that later calls allocate nothing and can be captured in a CUDA graph.
#pragma once

#include <cublas_v2.h>

#include "flashrnn/core/stream.hpp"

namespace flashrnn::cuda {

// The calling thread's handle for the current device, bound to `stream`.
cublasHandle_t cublas_for(Stream stream);

} // namespace flashrnn::cuda

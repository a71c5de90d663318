// The fused Newton forward's launch (fused.cu; the kernel in fused.cuh), called by newton::forward for
// Backend::fused (passes.cu).
#pragma once

#include "cuda/newton/rows.cuh"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/newton/problem.hpp"

namespace flashrnn::cuda::newton {

// The forward of `problem` (checked by the caller) with options.max_iterations Newton iterations per
// tile, or with options.tolerance at most that many; `counters` (zeroed by the caller) receives the
// final residual, the non-finite flag and, with a tolerance, the most iterations of a tile and whether
// one missed it; null when no statistics are asked for.
void fused_forward(const flashrnn::newton::Problem& problem, const flashrnn::newton::ForwardArgs& args,
                   const flashrnn::newton::Options& options, Counters* counters, Stream stream);

} // namespace flashrnn::cuda::newton

// The fused Newton backward's launch (fused_backward.cu; the kernel in fused_backward.cuh), called by
// newton::backward for Backend::fused (passes.cu).
#pragma once

#include "flashrnn/core/stream.hpp"
#include "flashrnn/newton/problem.hpp"

namespace flashrnn::cuda::newton {

// The backward of `problem` (checked by the caller) in the block configuration options.fused_config or
// the scan launch model's fused_backward_config. args.d_parameters must be zeroed
// before (the kernel adds each sequence's sum); no workspace.
void fused_backward(const flashrnn::newton::Problem& problem, const flashrnn::newton::BackwardArgs& args,
                    const flashrnn::newton::Options& options, Stream stream);

} // namespace flashrnn::cuda::newton

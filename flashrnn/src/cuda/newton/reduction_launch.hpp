// The Newton reduction's launches (reduce.cu), shared by the public newton::reduce and the Newton
// solvers' passes (passes.cu).
#pragma once

#include "flashrnn/core/stream.hpp"
#include "flashrnn/newton/reduction.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::cuda::newton {

// The scan launch model's choice for the problem on the current GPU (cached per device and length).
ReductionLaunch reduction_launch(const flashrnn::newton::ReductionProblem& problem);

// The reduction of dense fp32 rows (problem.dtype is not read), unchecked: the solvers' own buffers.
// `accumulate` false: solution = x; true: solution += x (the Newton update of the iterate), except in
// the sequences s with skip[s] >= 0 (skip may be null). `solution` may be `rhs` (in place) when not
// accumulating. `workspace`: launch.workspace_bytes bytes.
void reduce_fp32(const flashrnn::newton::ReductionProblem& problem, const ReductionLaunch& launch,
                 const float* jacobians, const float* rhs, float* solution, bool accumulate, const int* skip,
                 void* workspace, Stream stream);

} // namespace flashrnn::cuda::newton

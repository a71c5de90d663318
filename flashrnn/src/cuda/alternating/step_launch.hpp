// Host side of the per-step kernels: picks the kernel instance for the cell, the element type and
// the vector width of the launch configuration, and launches it on the stream.
#pragma once

#include "cuda/alternating/step_kernels_params.hpp"
#include "flashrnn/cells/registry.hpp"
#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"
#include "tiling/pointwise_launch.hpp"

namespace flashrnn::alternating {

void launch_forward_step(Cell cell, DType dtype, const PointwiseLaunch& launch, const ForwardStep& step,
                         Stream stream);
void launch_backward_step(Cell cell, DType dtype, const PointwiseLaunch& launch, const BackwardStep& step,
                          Stream stream);
// The most threads per block that every instance of the cell's step kernels (forward and backward, every
// vector width) can be launched with: their register use read back from the compiled kernels.
int step_kernels_max_threads(Cell cell, DType dtype);

void launch_initial_states_gradient(DType dtype, const InitialStatesGradient& params, Stream stream);

} // namespace flashrnn::alternating

// The Newton family's GPU entry points, in the calling convention of every FlashRNN family:
// newton::forward(problem, args, options, stream) and newton::backward. Calls are asynchronous on the
// caller's stream, never synchronise the device and allocate nothing: the caller passes the workspace
// (forward_workspace_bytes / backward_workspace_bytes, for the same problem and options).
//
// Forward, Backend::newton (paper Alg. 1a): the initial guess (eq. 10), then per iteration one kernel
// that evaluates the residuals and Jacobians at the current iterate and one reduction
// (newton::reduce's kernels) that adds the update to the iterate; a last evaluation writes the states
// and the statistics. With a tolerance, a sequence that meets it keeps its iterate (the launches are
// the same: no host synchronisation, so a call can be captured in a CUDA graph). A residual that is
// not finite sets the statistics' non_finite slot (the GPU never throws NumericalError: read the slot).
// Backend::sequential: one thread per (batch row, unit) loops over time (exact, 0 iterations).
//
// Backward (eq. 6, either backend's forward): Backend::newton builds the transposed Jacobians at the
// given states and solves g_t = J_{t+1}^T g_{t+1} + d_t as one reverse reduction, then the gradients
// of the inputs, the parameters (summed over batch rows with atomics: the last bits may vary between
// runs) and the initial state; Backend::sequential runs the same recurrence one thread per sequence.
#pragma once

#include <cstddef>

#include "flashrnn/core/stream.hpp"
#include "flashrnn/newton/problem.hpp"
#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn::newton {

// The cost model of Backend::automatic: estimated seconds of each backend on a GPU (bytes moved at an
// assumed bandwidth, a latency per sequential step and per launch; constants in passes.cpp, estimates
// not yet measured). Newton when it is the cheaper.
struct CostEstimate {
    double newton_seconds = 0;
    double sequential_seconds = 0;
};
CostEstimate estimate_cost(const DeviceLimits& limits, const Problem& problem, const Options& options);

// The backend `options.backend` stands for: itself, or for automatic the cheaper by estimate_cost
// (limits of the current GPU in resolve_backend; choose_backend takes them).
Backend choose_backend(const DeviceLimits& limits, const Problem& problem, const Options& options);
Backend resolve_backend(const Problem& problem, const Options& options);

std::size_t forward_workspace_bytes(const Problem& problem, const Options& options = {});
std::size_t backward_workspace_bytes(const Problem& problem, const Options& options = {});

// ShapeError/UnsupportedError for bad arguments (check_forward_args / check_backward_args, the options,
// the workspace), before any launch.
void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream);
void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream);

} // namespace flashrnn::newton

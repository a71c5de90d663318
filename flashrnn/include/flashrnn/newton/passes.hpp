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
// Backend::fused (paper App. D.2/D.3): one kernel, one block per sequence walking it in tiles of
// fused_config's elements x threads steps held on chip; per tile the initial guess (eq. 10, its first
// step from the state entering the tile), max_iterations Newton iterations (residuals, Jacobians and the
// tile's reduction through the scan core's block scan), the states written once. The state entering a
// tile is the previous tile's result, held fixed: for T within one tile this is Backend::newton's
// algorithm; for longer sequences it is Newton tile after tile ("segmented Newton", converging to the
// same sequential solution; docs/kernels.md). With a tolerance each tile stops once its residual meets
// it against its largest state (per tile, not per sequence: the same for T within one tile), at most
// max_iterations; the statistics report the most iterations of any tile, the residual of the returned
// states and whether every tile met the tolerance.
//
// Backward (eq. 6, any backend's forward): Backend::newton builds the transposed Jacobians at the
// given states and solves g_t = J_{t+1}^T g_{t+1} + d_t as one reverse reduction, then the gradients
// of the inputs, the parameters (summed over batch rows with atomics: the last bits may vary between
// runs) and the initial state; Backend::fused does the same in one kernel, a block per sequence walking
// its tiles from the end (the inputs, states and their gradients read once, the inputs' gradients
// written once, no workspace; src/cuda/newton/fused_backward.cuh); Backend::sequential runs the same
// recurrence one thread per sequence.
#pragma once

#include <cstddef>

#include "flashrnn/core/stream.hpp"
#include "flashrnn/newton/problem.hpp"
#include "flashrnn/tiling/device_limits.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::newton {

// The cost model of Backend::automatic (src/newton/backend.cpp; docs/kernels.md, "Newton solvers"):
// per pass and backend, the bytes moved to and from DRAM at a fraction of the device's bandwidth
// (DeviceLimits::memory_bandwidth), the chain of dependent steps (sequential: T steps per wave of
// resident threads; Newton: per iteration, the reduction's max_sequential_steps tiles per wave of
// resident blocks) or the instructions issued at a fraction of the SMs' issue rate, whichever is
// longest, plus a latency per launch. The sequential kernel's threads read their rows one value per
// step, each value a DRAM sector of its own (32 bytes). The fused forward: inputs read and states
// written once, its chain of tiles per wave of resident blocks, or its instructions (the measured
// count per element and iteration); the fused backward: its bytes or its instructions (measured). The
// forward takes the backend with the cheapest forward, the backward the one with the cheapest
// backward: every backward takes any forward's states (they solve the same recurrence).
struct PassCost {
    double seconds = 0;         // the estimate: max(bytes / bandwidth, latency, issue) + launches x launch
    double bytes = 0;           // moved to and from DRAM
    double latency_seconds = 0; // the chain of dependent steps
    double issue_seconds = 0;   // the warp instructions at the SMs' achieved issue rate (0: not modelled)
    int launches = 0;
};
struct CostEstimate {
    double newton_seconds = 0;     // newton_forward.seconds
    double sequential_seconds = 0; // sequential_forward.seconds
    double fused_seconds = 0;      // fused_forward.seconds
    PassCost newton_forward, newton_backward, sequential_forward, sequential_backward, fused_forward,
        fused_backward;
    double bandwidth = 0;      // bytes per second assumed
    ReductionLaunch reduction; // the solvers' reduction launch (forward and backward)

    // A backend's pass (automatic is none of them: refused with UnsupportedError).
    const PassCost& forward(Backend backend) const;
    const PassCost& backward(Backend backend) const;
};
CostEstimate estimate_cost(const DeviceLimits& limits, const Problem& problem, const Options& options);

// The scan kernel of the cell's reduction (diagonal or 2x2 blocks), and the launch the solvers use for
// it (their fp32 Jacobians and residuals; the scan launch model, tiling/scan_launch.hpp).
ScanKernel reduction_kernel(Cell cell);
ReductionLaunch solver_reduction_launch(const DeviceLimits& limits, const Problem& problem);

// The fused forward's scan kernel for the cell, and its block configuration (the scan launch model over
// kNewtonFusedDomains, tiling/scan_launch.hpp).
ScanKernel fused_kernel(Cell cell);
ScanConfig fused_config(const DeviceLimits& limits, const Problem& problem);
// The fused backward's, likewise (its own preferences: it moves more rows per step and iterates none).
// Options::fused_config, where given, forces both passes' configuration.
ScanKernel fused_backward_kernel(Cell cell);
ScanConfig fused_backward_config(const DeviceLimits& limits, const Problem& problem);

// The backend `options.backend` stands for: itself, or for automatic the cheaper by estimate_cost
// (limits of the current GPU in resolve_backend; choose_backend takes them).
Backend choose_backend(const DeviceLimits& limits, const Problem& problem, const Options& options);
Backend resolve_backend(const Problem& problem, const Options& options);
// The backward's: the cheaper backward by estimate_cost, which may differ from the forward's choice.
Backend choose_backward_backend(const DeviceLimits& limits, const Problem& problem, const Options& options);
Backend resolve_backward_backend(const Problem& problem, const Options& options);

std::size_t forward_workspace_bytes(const Problem& problem, const Options& options = {});
std::size_t backward_workspace_bytes(const Problem& problem, const Options& options = {});

// ShapeError/UnsupportedError for bad arguments (check_forward_args / check_backward_args, the options,
// the workspace), before any launch.
void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream);
void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream);

} // namespace flashrnn::newton

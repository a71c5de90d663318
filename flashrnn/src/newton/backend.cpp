// The automatic choice between the Newton and the sequential GPU backends: a cost model over the device
// limits (bandwidth, SMs, resident threads) and the reduction's launch (scan_launch.hpp), host-only so
// that it is tested without a GPU. The sequential step latencies are measured (H100, below); the
// reduction's tile latency and the launch cost are still estimates: examples/bench/newton_bench.cpp
// prints the choice against the measured times.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"
#include "newton/sequential_tiles.hpp"

namespace flashrnn::newton {
namespace {

// The fraction of the peak DRAM bandwidth a streaming kernel reaches (H100: cudaMemcpy device to device
// 3004 GB/s of 3350 peak, the scans 90-97% of that, docs/benchmarks.md), and the bandwidth assumed
// where DeviceLimits does not know it.
constexpr double kAchievedBandwidthFraction = 0.8;
constexpr double kUnknownBandwidth = 2.0e12;
// Latencies. A step of the sequential kernel is a chain of dependent transcendental functions, the
// inputs staged in shared memory (sequential_tiles.hpp): measured on the H200 (newton_bench,
// 2026-12-03, B = 1, 256 units, T = 65536, one warp per SM; `newton_measured_grid.py --fit`), per step,
// forward and backward. Where many warps share an SM the issue term below bounds them. Estimates: a block
// scans a tile of the reduction in about 1 us (its loads are pipelined: a scan through registers,
// shuffles and shared memory); a launch costs a few microseconds.
struct SequentialStepSeconds {
    double forward, backward;
};
SequentialStepSeconds sequential_step_seconds(Cell cell, DType dtype) {
    const bool wide = bytes_of(dtype) == 4;
    if (cell == Cell::flash_gru)
        return wide ? SequentialStepSeconds{0.0869e-6, 0.274e-6} : SequentialStepSeconds{0.118e-6, 0.168e-6};
    return wide ? SequentialStepSeconds{0.0946e-6, 0.338e-6} : SequentialStepSeconds{0.145e-6, 0.277e-6};
}
constexpr double kReductionTileSeconds = 1.0e-6;
constexpr double kLaunchSeconds = 4.0e-6;
// The fused forward's tile: the initial guess, then per iteration a cell step and a block scan (two
// barriers) over the tile held in registers. An estimate, like the reduction's tile.
constexpr double kFusedTileIterationSeconds = 1.0e-6;

// The fraction of the SMs' issue slots (4 warp schedulers per SM, one instruction each per cycle) the
// fused forward keeps busy: 80-85% in Nsight Compute on the H100 (issue 16, round 5, docs/benchmarks.md).
constexpr double kAchievedIssueFraction = 0.82;
constexpr int kWarpSchedulersPerSm = 4; // every architecture since sm_70
// Thread instructions per element of the fused forward (one step of one sequence), as a base (the guess,
// the copies, the store, the last iteration's extra cost) plus a count per Newton iteration: the ncu
// totals at 3 iterations (H100, round 5: FlashGRU 131.2 fp32 / 128.8 bf16, FlashLSTM 216.4 / 215.1)
// less 3 cheap iterations of the SASS (FlashGRU 34 / 36, FlashLSTM 61 per step). Checked on the H200
// (2026-12-02) against bf16 at 2 iterations: FlashGRU 1.786 ms measured, FlashLSTM 3.035 (B 32 x 2048, T
// 8192), which the counts predict within 5%.
struct FusedInstructions {
    double base, per_iteration;
};
FusedInstructions fused_instructions(Cell cell, DType dtype) {
    const bool wide = bytes_of(dtype) == 4;
    if (cell == Cell::flash_gru) return wide ? FusedInstructions{29.2, 34} : FusedInstructions{20.8, 36};
    return wide ? FusedInstructions{33.4, 61} : FusedInstructions{32.1, 61};
}
// The sequential kernels' throughput where many warps are resident (B 512 x 2048 units), and the fused
// backward's (B 32 x 2048, T 2048), counted as thread instructions per step of one sequence at
// kAchievedIssueFraction: fitted to the H200's times (newton_bench, 2026-12-03,
// `examples/bench/newton_measured_grid.py --fit`), not counted in the SASS (the sequential forward's
// SASS has about 35 per FlashGRU step; what the fit adds is the wait on memory at that occupancy).
struct IssueCounts {
    double sequential_forward, sequential_backward, fused_backward;
};
IssueCounts issue_counts(Cell cell, DType dtype) {
    const bool wide = bytes_of(dtype) == 4;
    if (cell == Cell::flash_gru) return wide ? IssueCounts{127, 460, 270} : IssueCounts{120, 363, 249};
    return wide ? IssueCounts{163, 603, 480} : IssueCounts{154, 569, 510};
}

// The time to issue `thread_instructions` at kAchievedIssueFraction of the SMs' slots; 0 where the
// device's clock is unknown.
double issue_seconds(const DeviceLimits& limits, double thread_instructions) {
    if (limits.sm_clock <= 0) return 0;
    return thread_instructions / std::max(1, limits.warp_size) /
           (double(limits.sm_count) * kWarpSchedulersPerSm * limits.sm_clock * kAchievedIssueFraction);
}

// The sequences the sequential kernels keep resident: one warp of 32 per block, as many blocks per SM
// as their tiles' shared memory (and the SM's block and thread limits) allow.
double sequential_resident_sequences(const DeviceLimits& limits, int tile_bytes) {
    int warps = std::min(std::max(1, limits.max_blocks_per_sm),
                         std::max(1, limits.max_threads_per_sm / kSequentialTileSequences));
    if (limits.shared_memory_per_sm > 0)
        warps = std::min<std::int64_t>(warps, limits.shared_memory_per_sm /
                                                  (tile_bytes + limits.reserved_shared_memory_per_block));
    return double(std::max(1, limits.sm_count)) * std::max(1, warps) * kSequentialTileSequences;
}

PassCost finish(PassCost cost, double bandwidth) {
    cost.seconds = std::max({cost.bytes / bandwidth, cost.latency_seconds, cost.issue_seconds}) +
                   cost.launches * kLaunchSeconds;
    return cost;
}

} // namespace

ScanKernel reduction_kernel(Cell cell) {
    return cell_info(cell).num_states == 2 ? ScanKernel::newton_reduce_2x2
                                           : ScanKernel::newton_reduce_diagonal;
}

ScanKernel fused_kernel(Cell cell) {
    return cell_info(cell).num_states == 2 ? ScanKernel::newton_fused_lstm : ScanKernel::newton_fused_gru;
}

namespace {

// Shared access reads rows of any alignment: the rows' alignment takes no part.
ScanConfig fused_kernel_config(const DeviceLimits& limits, ScanKernel kernel, const Problem& problem) {
    return choose_scan_config(limits, kernel,
                              {problem.shape.sequences(), problem.shape.time_steps,
                               static_cast<int>(bytes_of(problem.dtype)), false, false});
}

} // namespace

ScanConfig fused_config(const DeviceLimits& limits, const Problem& problem) {
    return fused_kernel_config(limits, fused_kernel(problem.cell), problem);
}

ScanKernel fused_backward_kernel(Cell cell) {
    return cell_info(cell).num_states == 2 ? ScanKernel::newton_fused_backward_lstm
                                           : ScanKernel::newton_fused_backward_gru;
}

ScanConfig fused_backward_config(const DeviceLimits& limits, const Problem& problem) {
    return fused_kernel_config(limits, fused_backward_kernel(problem.cell), problem);
}

ReductionLaunch solver_reduction_launch(const DeviceLimits& limits, const Problem& problem) {
    // The solvers reduce their own fp32 buffers (Jacobians, residuals), whatever the problem's dtype.
    return choose_reduction_launch(limits, reduction_kernel(problem.cell),
                                   {problem.shape.sequences(), problem.shape.time_steps, 4, false, false});
}

CostEstimate estimate_cost(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    const CellInfo cell = cell_info(problem.cell);
    CostEstimate cost;
    cost.bandwidth = (limits.memory_bandwidth > 0 ? limits.memory_bandwidth : kUnknownBandwidth) *
                     kAchievedBandwidthFraction;
    cost.reduction = solver_reduction_launch(limits, problem);
    const double sequences = static_cast<double>(problem.shape.sequences());
    const double T = static_cast<double>(problem.shape.time_steps);
    const double N = sequences * T; // elements of one state row
    const double e = bytes_of(problem.dtype), S = cell.num_states, G = cell.num_gates;

    // Sequential: one thread per sequence, a warp's 32 staging their tiles in shared memory
    // (sequential_tiles.hpp); the inputs read and the states written once, in whole sectors, the chain
    // of T steps per wave of resident warps, or the measured issue rate, whichever is longest (H200,
    // FlashGRU fp32, B 32 x 2048, T 2048: 3.53 ms before the tiles, 1.48 with them, 0.70 with their cheap
    // copies and activations; docs/benchmarks.md).
    const SequentialStepSeconds step = sequential_step_seconds(problem.cell, problem.dtype);
    const auto waves = [&](bool backward, int slots) { // of resident warps over the sequences
        const int value_bytes = static_cast<int>(e);
        return std::ceil(sequences / sequential_resident_sequences(
                                         limits, sequential_tile_bytes(
                                                     value_bytes, sequential_tile_steps(backward), slots)));
    };
    const double forward_waves = waves(false, sequential_forward_slots(cell.num_gates));
    const double backward_waves = waves(true, sequential_backward_slots(cell.num_gates, cell.num_states));
    cost.sequential_forward.bytes = N * (G + S) * e;
    cost.sequential_forward.latency_seconds = forward_waves * T * step.forward;
    cost.sequential_forward.launches = 1;
    const IssueCounts counts = issue_counts(problem.cell, problem.dtype);
    cost.sequential_forward.issue_seconds = issue_seconds(limits, N * counts.sequential_forward);
    // Backward: inputs, states, their gradients read; the inputs' gradients written.
    cost.sequential_backward.bytes = N * (2 * G + 2 * S) * e;
    cost.sequential_backward.latency_seconds = backward_waves * T * step.backward;
    cost.sequential_backward.issue_seconds = issue_seconds(limits, N * counts.sequential_backward);
    cost.sequential_backward.launches = 1;

    // Newton (unfused): the initial guess (inputs read, fp32 iterate written), per iteration an
    // evaluation (inputs and iterate read, Jacobians and residuals written) and a reduction (Jacobians,
    // residuals and the iterate read, the iterate written), a last evaluation writing the states. The
    // reduction's chain: the tiles a block scans in turn, per wave of resident blocks.
    const ReductionLaunch& r = cost.reduction;
    const double blocks = sequences * static_cast<double>(r.segments);
    const int blocks_per_sm = std::max(
        1, std::min(limits.max_blocks_per_sm, limits.max_threads_per_sm / r.config.threads_per_block));
    const double block_waves = std::ceil(blocks / std::max(1.0, double(limits.sm_count) * blocks_per_sm));
    const double reduction_chain =
        block_waves * static_cast<double>(r.max_sequential_steps) * kReductionTileSeconds;
    const double iterations = options.max_iterations;
    const double initial = N * (G * e + 4 * S);
    const double evaluation = N * (G * e + 4 * S + 4 * S * S + 4 * S);
    const double reduction = N * 4 * (S * S + 3 * S);
    const double last = N * (G * e + 4 * S + S * e);
    cost.newton_forward.bytes = initial + iterations * (evaluation + reduction) + last;
    cost.newton_forward.latency_seconds = iterations * reduction_chain;
    cost.newton_forward.launches = static_cast<int>(2 + iterations * (1 + r.launches()));
    // Backward (eq. 6): the system (inputs, states, their gradients read; J^T and the right-hand sides
    // written), one reverse reduction in place, the gradients (inputs, states, carries read; the
    // inputs' gradients written).
    cost.newton_backward.bytes = N * (G * e + 2 * S * e + 4 * S * S + 4 * S) + N * 4 * (S * S + 2 * S) +
                                 N * (2 * G * e + S * e + 4 * S);
    cost.newton_backward.latency_seconds = reduction_chain;
    cost.newton_backward.launches = 2 + r.launches();

    // Fused: the inputs read and the states written once; each block walks its sequence's tiles in
    // turn, (iterations + 1) steps each, per wave of resident blocks (with a tolerance, the most: a
    // tile that meets it stops sooner); or its instructions, where the device's clock is known.
    const ScanConfig fused = fused_config(limits, problem);
    const double fused_tile = double(fused.elements_per_thread) * fused.threads_per_block;
    const int fused_blocks_per_sm =
        std::max(1, std::min(limits.max_blocks_per_sm, limits.max_threads_per_sm / fused.threads_per_block));
    const double fused_waves =
        std::ceil(sequences / std::max(1.0, double(limits.sm_count) * fused_blocks_per_sm));
    cost.fused_forward.bytes = N * (G * e + S * e);
    cost.fused_forward.latency_seconds =
        fused_waves * std::ceil(T / fused_tile) * (iterations + 1) * kFusedTileIterationSeconds;
    cost.fused_forward.launches = 1;
    const FusedInstructions count = fused_instructions(problem.cell, problem.dtype);
    cost.fused_forward.issue_seconds =
        issue_seconds(limits, N * (count.base + count.per_iteration * iterations));

    // The fused backward (eq. 6 in one kernel): inputs, states and their gradients read, the inputs'
    // gradients written; bound by its instructions (the measured count).
    cost.fused_backward.bytes = N * (2 * G + 2 * S) * e;
    cost.fused_backward.issue_seconds = issue_seconds(limits, N * counts.fused_backward);
    cost.fused_backward.launches = 1;

    cost.newton_forward = finish(cost.newton_forward, cost.bandwidth);
    cost.fused_backward = finish(cost.fused_backward, cost.bandwidth);
    cost.newton_backward = finish(cost.newton_backward, cost.bandwidth);
    cost.sequential_forward = finish(cost.sequential_forward, cost.bandwidth);
    cost.sequential_backward = finish(cost.sequential_backward, cost.bandwidth);
    cost.fused_forward = finish(cost.fused_forward, cost.bandwidth);
    cost.fused_seconds = cost.fused_forward.seconds;
    cost.newton_seconds = cost.newton_forward.seconds;
    cost.sequential_seconds = cost.sequential_forward.seconds;
    return cost;
}

const PassCost& CostEstimate::forward(Backend backend) const {
    switch (backend) {
    case Backend::newton:
        return newton_forward;
    case Backend::sequential:
        return sequential_forward;
    case Backend::fused:
        return fused_forward;
    default:
        throw UnsupportedError(
            "flashrnn::newton::CostEstimate: the automatic backend has no pass of its own");
    }
}

const PassCost& CostEstimate::backward(Backend backend) const {
    switch (backend) {
    case Backend::newton:
        return newton_backward;
    case Backend::sequential:
        return sequential_backward;
    case Backend::fused:
        return fused_backward;
    default:
        throw UnsupportedError(
            "flashrnn::newton::CostEstimate: the automatic backend has no pass of its own");
    }
}

namespace {

// The backend whose pass is the cheapest; ties (both bound by the same bytes) go to the fused kernel,
// measured at 80-97% of copy, then to Newton.
template <class Pass> Backend cheapest(Pass pass) {
    Backend best = Backend::fused;
    for (Backend b : {Backend::newton, Backend::sequential})
        if (pass(b).seconds < pass(best).seconds) best = b;
    return best;
}

} // namespace

Backend choose_backend(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    if (options.backend != Backend::automatic) return options.backend;
    const CostEstimate cost = estimate_cost(limits, problem, options);
    return cheapest([&](Backend b) -> const PassCost& { return cost.forward(b); });
}

Backend choose_backward_backend(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    if (options.backend != Backend::automatic) return options.backend;
    const CostEstimate cost = estimate_cost(limits, problem, options);
    return cheapest([&](Backend b) -> const PassCost& { return cost.backward(b); });
}

} // namespace flashrnn::newton

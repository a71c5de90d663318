// The automatic choice between the Newton and the sequential GPU backends: a cost model over the device
// limits (bandwidth, SMs, resident threads) and the reduction's launch (scan_launch.hpp), host-only so
// that it is tested without a GPU. The sequential step latencies are measured (H100, below); the
// reduction's tile latency and the launch cost are still estimates: examples/bench/newton_bench.cpp
// prints the choice against the measured times.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "flashrnn/newton/passes.hpp"

namespace flashrnn::newton {
namespace {

// The fraction of the peak DRAM bandwidth a streaming kernel reaches (H100: cudaMemcpy device to device
// 3004 GB/s of 3350 peak, the scans 90-97% of that, docs/benchmarks.md), and the bandwidth assumed
// where DeviceLimits does not know it.
constexpr double kAchievedBandwidthFraction = 0.8;
constexpr double kUnknownBandwidth = 2.0e12;
// Latencies. A step of the sequential kernel is a chain of dependent transcendental functions after a
// load: measured on an H100 at B = 1, 256 units, T = 65536 (newton_bench, 2026-11-24), 0.52 us
// (FlashGRU) to 0.57 us (FlashLSTM) per step forward in fp32, and 0.88 to 1.13 us per step backward
// (the first guesses, 0.2 / 0.4 us, picked sequential where Newton was 2-2.8x faster, 12 of 80 grid
// points). Estimates still: a block scans a tile of the reduction in about 1 us (its loads are
// pipelined: a scan through registers, shuffles and shared memory); a launch costs a few microseconds.
constexpr double kSequentialStepSeconds = 0.55e-6;
constexpr double kSequentialBackwardStepSeconds = 1.0e-6;
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
// A DRAM sector: the sequential kernel's unit of traffic per value (its warps read 32 rows at one step).
constexpr double kSectorBytes = 32;

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

    // Sequential: one thread per sequence; the inputs read and the states written once, a sector per value
    // (a warp's 32 threads read 32 rows at the same step, and the sectors do not stay in L1 until the
    // thread's next steps use the rest of them: on the H200 at B 32 x 2048, T 2048, FlashGRU fp32 took
    // 3.53 ms, bf16 3.33, for 2.15 and 1.07 GB of values), or the chain of T steps per wave of resident
    // threads, whichever is longer.
    const double resident_threads =
        std::max(1.0, double(limits.sm_count) * std::max(1, limits.max_threads_per_sm));
    const double thread_waves = std::ceil(sequences / resident_threads);
    cost.sequential_forward.bytes = N * (G + S) * kSectorBytes;
    cost.sequential_forward.latency_seconds = thread_waves * T * kSequentialStepSeconds;
    cost.sequential_forward.launches = 1;
    // Backward: inputs, states, their gradients read; the inputs' gradients written.
    cost.sequential_backward.bytes = N * (2 * G + 2 * S) * kSectorBytes;
    cost.sequential_backward.latency_seconds = thread_waves * T * kSequentialBackwardStepSeconds;
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
    if (limits.sm_clock > 0) {
        const FusedInstructions count = fused_instructions(problem.cell, problem.dtype);
        const double warp_instructions =
            N * (count.base + count.per_iteration * iterations) / std::max(1, limits.warp_size);
        cost.fused_forward.issue_seconds =
            warp_instructions /
            (double(limits.sm_count) * kWarpSchedulersPerSm * limits.sm_clock * kAchievedIssueFraction);
    }

    cost.newton_forward = finish(cost.newton_forward, cost.bandwidth);
    cost.newton_backward = finish(cost.newton_backward, cost.bandwidth);
    cost.sequential_forward = finish(cost.sequential_forward, cost.bandwidth);
    cost.sequential_backward = finish(cost.sequential_backward, cost.bandwidth);
    cost.fused_forward = finish(cost.fused_forward, cost.bandwidth);
    cost.fused_seconds = cost.fused_forward.seconds;
    cost.newton_seconds = cost.newton_forward.seconds;
    cost.sequential_seconds = cost.sequential_forward.seconds;
    return cost;
}

Backend choose_backend(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    if (options.backend != Backend::automatic) return options.backend;
    const CostEstimate cost = estimate_cost(limits, problem, options);
    if (cost.fused_seconds < std::min(cost.newton_seconds, cost.sequential_seconds)) return Backend::fused;
    return cost.newton_seconds < cost.sequential_seconds ? Backend::newton : Backend::sequential;
}

} // namespace flashrnn::newton

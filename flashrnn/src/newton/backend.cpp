// The automatic choice between the Newton and the sequential GPU backends: a cost model of estimates
// (not yet measured; the benchmark of issue 16 is to replace them), host-only so that it is tested
// without a GPU.
#include <algorithm>
#include <cstdint>

#include "flashrnn/newton/passes.hpp"

namespace flashrnn::newton {
namespace {

// Assumed device bandwidth (bytes/s) and latencies. The sequential kernel's step is a chain of
// dependent transcendental functions (about 0.2 us); a launch costs a few microseconds.
constexpr double kBandwidth = 2.0e12;
constexpr double kSequentialStepSeconds = 0.2e-6;
constexpr double kLaunchSeconds = 4.0e-6;

} // namespace

CostEstimate estimate_cost(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    const CellInfo cell = cell_info(problem.cell);
    const double elements = static_cast<double>(problem.shape.sequences()) * problem.shape.time_steps;
    const double element_bytes = bytes_of(problem.dtype);
    const double S = cell.num_states, G = cell.num_gates;
    // Sequential: the inputs read and the states written once, or the step latency per wave of threads.
    const double resident = std::max(1.0, double(limits.sm_count) * std::max(1, limits.max_threads_per_sm));
    const double waves = std::max(1.0, static_cast<double>(problem.shape.sequences()) / resident);
    const double sequential_bytes = elements * (G + S) * element_bytes;
    const double sequential =
        std::max(sequential_bytes / kBandwidth, waves * problem.shape.time_steps * kSequentialStepSeconds);
    // Newton (unfused): per evaluation the inputs, the fp32 iterate, Jacobians and residuals (assembly),
    // per iteration the reduction's Jacobians, residuals and the iterate read and written.
    const double evaluation = elements * (G * element_bytes + 4 * (S + S * S + S));
    const double reduction = elements * 4 * (S * S + 3 * S);
    const double iterations = options.max_iterations;
    const double newton_bytes = (iterations + 1) * evaluation + iterations * reduction;
    const double launches = 2 + 3 * iterations;
    return {newton_bytes / kBandwidth + launches * kLaunchSeconds, sequential + kLaunchSeconds};
}

Backend choose_backend(const DeviceLimits& limits, const Problem& problem, const Options& options) {
    if (options.backend != Backend::automatic) return options.backend;
    const CostEstimate cost = estimate_cost(limits, problem, options);
    return cost.newton_seconds < cost.sequential_seconds ? Backend::newton : Backend::sequential;
}

} // namespace flashrnn::newton

#include "tiling/pointwise_launch.hpp"
#include "flashrnn/core/error.hpp"

#include <constrint/constrint.hpp>

#include <algorithm>
#include <stdexcept>

#include "tiling/solve_or_explain.hpp"

namespace flashrnn {

using constrint::Integer;

PointwiseLaunch choose_pointwise_launch(const DeviceLimits& limits, const PointwiseProblem& problem) {
    if (problem.elements <= 0 || problem.head_dim <= 0) {
        throw ShapeError("pointwise launch: the problem has no elements (elements " +
                         std::to_string(problem.elements) + ", head dimension " +
                         std::to_string(problem.head_dim) + ")");
    }
    if (problem.bytes_per_element != 2 && problem.bytes_per_element != 4) {
        throw ShapeError("pointwise launch: bytes per element must be 2 or 4, got " +
                         std::to_string(problem.bytes_per_element));
    }
    const Integer elements = problem.elements;

    constrint::Model m;
    auto threads = m.var("threads_per_block", limits.warp_size, limits.max_threads_per_block);
    auto vector = m.var("vector_width", std::vector<Integer>{1, 2, 4, 8});
    auto per_thread = m.var("elements_per_thread", 1, 64);
    auto blocks = m.var("blocks", 1, Integer(2147483647)); // gridDim.x limit
    m.add(threads % limits.warp_size == 0, "threads are whole warps");
    if (problem.max_threads_per_block > 0)
        m.add(threads <= problem.max_threads_per_block, "the compiled kernel's registers allow the threads");
    m.add(vector * problem.bytes_per_element <= 16, "a vector access is at most 16 bytes");
    m.add(vector * problem.bytes_per_element <= std::max(problem.max_vector_bytes, problem.bytes_per_element),
          "a vector access is aligned in every tensor");
    m.add(constrint::Expr(problem.head_dim) % vector == 0, "a vector access stays inside a head's row");
    m.add(per_thread % vector == 0, "a thread handles whole vectors");
    m.add(blocks * threads * per_thread >= elements, "the blocks cover every element");
    m.add((blocks - 1) * threads * per_thread < elements, "no block is left without work");
    // Two blocks per SM when the work allows it (each block at least one warp-wide vector access).
    const auto warp_work = limits.warp_size * vector;
    m.add(blocks >= constrint::min(2 * limits.sm_count, (elements + warp_work - 1) / warp_work),
          "enough blocks to occupy the SMs");
    m.search({vector, per_thread, threads});
    m.prefer(vector, constrint::Prefer::Max);
    m.prefer(per_thread, constrint::Prefer::Min);
    m.prefer(threads, constrint::Prefer::Max);

    constrint::SolveOptions options;
    options.node_limit = 100000;
    const auto no_configuration = [&] {
        return "pointwise launch: no configuration for " + std::to_string(problem.elements) +
               " elements on " + limits.name;
    };
    const constrint::Solution s = tiling::solve_or_explain(m, options, options, no_configuration).solution;
    return {static_cast<int>(s[threads]), static_cast<int>(s[vector]), static_cast<int>(s[per_thread]),
            static_cast<std::int64_t>(s[blocks])};
}

std::string describe(const PointwiseLaunch& launch) {
    return std::to_string(launch.blocks) + " blocks x " + std::to_string(launch.threads_per_block) +
           " threads, " + std::to_string(launch.elements_per_thread) + " elements per thread in vectors of " +
           std::to_string(launch.vector_width);
}

} // namespace flashrnn

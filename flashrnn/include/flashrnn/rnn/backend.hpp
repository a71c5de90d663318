// Which implementation runs a recurrent pass: the CPU has the float64 reference (reference.hpp);
// the GPU has two backends, and an automatic choice between them.
#pragma once

#include <string_view>

#include "flashrnn/rnn/problem.hpp"

namespace flashrnn::rnn {

enum class Backend {
    // fused when the kernels of both passes compile and load for the problem on the current GPU (the
    // model finds a configuration and the compiler confirms it; fused is the faster at every size it
    // runs, docs/benchmarks.md), else alternating. A refusal is remembered per problem and device.
    automatic,
    alternating, // per step a cuBLAS product and a pointwise kernel (alternating.hpp)
    fused,       // one persistent kernel per pass (fused.hpp)
};

std::string_view to_string(Backend backend);
Backend parse_backend(std::string_view name); // throws UnsupportedError naming the valid ones

// The backend `requested` stands for on the current GPU: itself, or for automatic the choice above
// (compiled once per problem and device). Throws UnsupportedError in a build without CUDA.
Backend resolve_backend(const Problem& problem, Backend requested);

} // namespace flashrnn::rnn

// Which implementation runs a recurrent pass: the CPU has the float64 reference (reference.hpp);
// the GPU has two backends, and an automatic choice between them.
#pragma once

#include <string_view>

#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn::rnn {

enum class Backend {
    // per pass, the cost rule of automatic_backend.hpp: fused when the pass's fused kernel compiles
    // and loads on the current GPU and runs the batch in one chunk, else alternating (the passes may
    // differ: a forward's gate cache feeds a backward of either backend). Remembered per problem,
    // pass and device.
    automatic,
    alternating, // per step a cuBLAS product and a pointwise kernel (alternating.hpp)
    fused,       // one persistent kernel per pass (fused.hpp)
};

std::string_view to_string(Backend backend);
Backend parse_backend(std::string_view name); // throws UnsupportedError naming the valid ones

// The backend `requested` stands for in `pass` on the current GPU: itself, or for automatic the
// choice above (compiled once per problem, pass and device). Throws UnsupportedError in a build
// without CUDA.
Backend resolve_backend(const Problem& problem, Backend requested, FusedPass pass);

} // namespace flashrnn::rnn

// The sources of the fused kernels and the headers they include, embedded in the library at build
// time (cmake/embed_sources.cmake) for NVRTC.
#pragma once

#include <string>
#include <vector>

namespace flashrnn::fused {

struct EmbeddedSource {
    std::string include_name; // e.g. "flashrnn/cells/lstm.hpp", "fused_forward.cuh"
    std::string text;
};

const std::vector<EmbeddedSource>& embedded_sources();

} // namespace flashrnn::fused

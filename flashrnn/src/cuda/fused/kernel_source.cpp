// The fused kernels as NVRTC sees them: a one-line program that includes the pass's kernel, with
// every header it needs given in memory (embedded at build time).
#include "cuda/fused/embedded_sources.hpp"
#include "cuda/fused/fused_compiler.hpp"

namespace flashrnn {

KernelSource fused_kernel_source(FusedPass pass) {
    const bool forward = pass == FusedPass::forward;
    KernelSource source{forward ? "fused_forward.cu" : "fused_backward.cu",
                        forward ? "#include \"fused_forward.cuh\"\n" : "#include \"fused_backward.cuh\"\n",
                        forward ? "flashrnn::fused::fused_forward" : "flashrnn::fused::fused_backward",
                        {}};
    for (const fused::EmbeddedSource& file : fused::embedded_sources())
        source.headers.emplace_back(file.include_name, file.text);
    return source;
}

} // namespace flashrnn

// The fused backend's compile loop without a GPU (fused_compile.hpp): load_kernel's loop up to the
// driver's checks (fused_backend.cpp).
#include "tiling/fused_compile_loop.hpp"

#include "flashrnn/core/error.hpp"

namespace flashrnn {

CompileOptions fused_compile_options() {
    CompileOptions options;
    options.extra_options = {"--use_fast_math"};
    return options;
}

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, FusedTilingRequest request,
                                        const CompileOptions& options) {
    const FusedTilingRequest first = request;
    const KernelSource source = fused_kernel_source(request.pass);
    FusedCompileResult out;
    for (out.attempts = 1; out.attempts <= kMaxFusedCompileAttempts; ++out.attempts) {
        try {
            out.traits = choose_fused_tiling(limits, request).traits;
        } catch (const TilingError& e) {
            if (const std::optional<FusedTilingRequest> next = after_refusal(first, request)) {
                request = *next;
                continue;
            }
            out.refusal = e.what();
            return out;
        }
        const CompiledKernel kernel =
            compile_fused_kernel(source, out.traits, architecture_of(limits.compute_capability()), options);
        out.registers_per_thread = kernel.registers.registers_per_thread;
        out.local_bytes = kernel.registers.stack_frame_bytes;
        out.spills_relaxed = !request.spills_exclude_every_block_size;
        if (out.local_bytes == 0) return out;
        out.history += "  - " + out.traits.key() + ": " + std::to_string(out.local_bytes) +
                       " bytes of local memory per thread (spills) with " +
                       std::to_string(out.registers_per_thread) + " registers\n";
        request = after_register_shortage(request, out.traits, out.registers_per_thread, out.local_bytes);
    }
    out.attempts = kMaxFusedCompileAttempts;
    out.refusal = "still spilling after " + std::to_string(kMaxFusedCompileAttempts) + " attempts";
    return out;
}

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, const FusedTilingRequest& request) {
    return compile_fused_tiling(limits, request, fused_compile_options());
}

} // namespace flashrnn

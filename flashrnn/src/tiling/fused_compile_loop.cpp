// The fused backend's compile loop (fused_compile_loop.hpp) and its CPU end (fused_compile.hpp).
#include "tiling/fused_compile_loop.hpp"

namespace flashrnn {

CompileOptions fused_compile_options() {
    CompileOptions options;
    options.extra_options = {"--use_fast_math"};
    return options;
}

FusedCompileOutcome run_fused_compile_loop(const DeviceLimits& limits, FusedTilingRequest request,
                                           const CompileOptions& options, const FusedCompileCheck& check) {
    const FusedTilingRequest first = request;
    const KernelSource source = fused_kernel_source(request.pass);
    FusedCompileOutcome out;
    FusedCompileResult& r = out.result;
    // The refusal before the loop asked for more k blocks (with_more_k_blocks): the one it reports
    // when those end refused too, in the words of the request as asked.
    std::optional<TilingError> refusal_as_asked;
    // Near the 255-register cap ptxas reports less than the kernel would need, so the feedback moves R
    // out of registers a little at a time: large heads (GRU fp16 at 1872 on the H100) found a
    // configuration on the 11th attempt. Every attempt is cached on disk.
    for (r.attempts = 1; r.attempts <= kMaxFusedCompileAttempts; ++r.attempts) {
        try {
            r.traits = choose_fused_tiling(limits, request).traits;
        } catch (const TilingError& e) { // the feedback may have left none (after_refusal)
            if (const std::optional<FusedTilingRequest> next = after_refusal(first, request)) {
                r.history += next->spills_exclude_every_block_size
                                 ? "  - no configuration left with the multicast gather: without clusters\n"
                                 : "  - no configuration left: spills exclude only blocks whose threads may "
                                   "have as few registers\n";
                request = *next;
                continue;
            }
            if (!refusal_as_asked) refusal_as_asked = e;
            // Only where more k blocks have a configuration: the check skips the explanation that a
            // refusal of the restart would compute for nothing (its refusal is not the one reported).
            if (const std::optional<FusedTilingRequest> more = with_more_k_blocks(first, request);
                more && fused_tiling_exists(limits, *more)) {
                r.history += "  - no configuration left: again with at least " +
                             std::to_string(more->min_k_blocks) + " k blocks\n";
                request = *more;
                continue;
            }
            r.refusal = refusal_as_asked->what();
            out.refusal = *refusal_as_asked;
            return out;
        }
        const CompiledKernel kernel =
            compile_fused_kernel(source, r.traits, architecture_of(limits.compute_capability()), options);
        r.registers_per_thread = kernel.registers.registers_per_thread;
        r.local_bytes = kernel.registers.stack_frame_bytes;
        r.spills_relaxed = !request.spills_exclude_every_block_size;
        const std::optional<FusedCompileFeedback> feedback = check(r.traits, kernel, request);
        if (!feedback) return out;
        r.history += "  - " + r.traits.key() + ": " + feedback->problem + "\n";
        request = feedback->next;
    }
    r.attempts = kMaxFusedCompileAttempts;
    r.refusal = "no configuration left after " + std::to_string(kMaxFusedCompileAttempts) + " attempts";
    return out;
}

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, FusedTilingRequest request,
                                        const CompileOptions& options) {
    // Without a GPU a configuration runs when ptxas compiled it without spills.
    const auto spills = [](const FusedKernelTraits& traits, const CompiledKernel& kernel,
                           const FusedTilingRequest& solved) -> std::optional<FusedCompileFeedback> {
        const int registers = kernel.registers.registers_per_thread;
        const std::int64_t local_bytes = kernel.registers.stack_frame_bytes;
        if (local_bytes == 0) return std::nullopt;
        return FusedCompileFeedback{std::to_string(local_bytes) +
                                        " bytes of local memory per thread (spills) with " +
                                        std::to_string(registers) + " registers",
                                    after_register_shortage(solved, traits, registers, local_bytes)};
    };
    return run_fused_compile_loop(limits, std::move(request), options, spills).result;
}

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, const FusedTilingRequest& request) {
    return compile_fused_tiling(limits, request, fused_compile_options());
}

} // namespace flashrnn

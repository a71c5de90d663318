// The fused backend's compile loop, shared by both of its ends: without a GPU (compile_fused_tiling,
// flashrnn/tiling/fused_compile.hpp: ptxas's spills) and in the backend's load_kernel
// (fused_backend.cpp: also what the driver says of the loaded kernel). The compiler's options the
// backend compiles with are here too.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/tiling/fused_compile.hpp"

namespace flashrnn {

// The cell's exp, tanh and divisions sit on every step's critical path: the fast approximations
// (a few ulp in fp32) are far inside the tolerances that tf32, bf16 and fp16 products already need.
CompileOptions fused_compile_options();

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, FusedTilingRequest request,
                                        const CompileOptions& options);

// What keeps a compiled configuration from running (one line of the loop's history), and the request
// the model is solved with next.
struct FusedCompileFeedback {
    std::string problem;
    FusedTilingRequest next;
};

// Looks at a compiled configuration (the request it was solved for): nothing when it runs.
using FusedCompileCheck = std::function<std::optional<FusedCompileFeedback>(
    const FusedKernelTraits&, const CompiledKernel&, const FusedTilingRequest&)>;

struct FusedCompileOutcome {
    FusedCompileResult result;
    std::optional<TilingError> refusal; // the model's refusal that ended the loop, with its explanation
};

// Up to kMaxFusedCompileAttempts times: the model's configuration for the request, compiled with
// `options` for the architecture of `limits`, then `check`; its feedback is solved next. When the model
// refuses, the loop goes on after_refusal (from the first request) where it has a next request, else
// it ends with the refusal. result.compiled() says nothing of `check`: see result.history.
FusedCompileOutcome run_fused_compile_loop(const DeviceLimits& limits, FusedTilingRequest request,
                                           const CompileOptions& options, const FusedCompileCheck& check);

} // namespace flashrnn

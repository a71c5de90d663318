// The compile loop of flashrnn/tiling/fused_compile.hpp with the compiler's options given (the tests
// cache their kernels in a folder of their own), and the options the fused backend compiles with.
#pragma once

#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/tiling/fused_compile.hpp"

namespace flashrnn {

// The cell's exp, tanh and divisions sit on every step's critical path: the fast approximations
// (a few ulp in fp32) are far inside the tolerances that tf32, bf16 and fp16 products already need.
CompileOptions fused_compile_options();

FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, FusedTilingRequest request,
                                        const CompileOptions& options);

} // namespace flashrnn

// The fused backend's compile loop without a GPU: the model's configuration compiled for the preset's
// architecture by NVRTC (ptxas's register report), a spill fed back to the model and the model solved
// again (after_register_shortage / after_refusal, fused_tiling.hpp), as the backend's load_kernel
// does before it loads the kernel. What it cannot check without the device: whether the driver can
// give the blocks their shared memory, keep a cooperative grid or a cluster resident (load_kernel's
// further feedback). For `flashrnn tune --backend fused --compile yes` and the tests; needs a build
// with CUDA (NVRTC), else throws UnsupportedError.
#pragma once

#include <cstdint>
#include <string>

#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn {

struct FusedCompileResult {
    FusedKernelTraits traits;     // the configuration the loop ended in (the last tried when refused)
    int attempts = 0;             // compilations and refusals, at most kMaxFusedCompileAttempts
    int registers_per_thread = 0; // ptxas's report of the last compilation
    std::int64_t local_bytes = 0; // its local memory per thread (spills); 0 when it compiled clean
    bool spills_relaxed = false;  // ended with spills excluding only blocks of as few registers
    std::string refusal;          // the model's explanation when no configuration was left
    std::string history;          // what the feedback tried: each configuration that spilled, a line each
    bool compiled() const { return refusal.empty() && local_bytes == 0; }
};

// The loop for `request` on `limits` (a preset or a device's), the kernels cached on disk as the
// backend caches them (default_kernel_cache_dir).
FusedCompileResult compile_fused_tiling(const DeviceLimits& limits, const FusedTilingRequest& request);

} // namespace flashrnn

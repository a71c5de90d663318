// The user's limits on the fused backend's tiling, read from the environment at each kernel lookup
// (docs/kernels.md, "Tuning the fused kernels"): FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK,
// FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD, FLASHRNN_FUSED_MAX_ROW_WARPS, FLASHRNN_FUSED_MIN_K_BLOCKS,
// FLASHRNN_FUSED_MAX_K_BLOCKS, FLASHRNN_FUSED_CLUSTER and FLASHRNN_FUSED_DIRECT_R_LOAD. Private
// to the library (src/) and free of CUDA, so that the CPU tests check the parsing
// (tests/flashrnn/test_fused_tuning.cpp).
#pragma once

#include <compare>
#include <cstdlib>
#include <string>

#include "core/environment.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"

namespace flashrnn::fused {

struct TilingLimits {
    int max_threads_per_block = FusedTilingRequest{}.max_threads_per_block;
    int max_blocks_per_head = 0; // 0: no limit
    int max_row_warps = 0;       // 0: no limit
    int min_k_blocks = 0;        // 0: as the model prefers
    int max_k_blocks = 0;        // 0: no limit
    FusedCluster cluster = FusedCluster::automatic;
    bool direct_r_load = FusedTilingRequest{}.direct_r_load; // 0: R loaded element by element
    auto operator<=>(const TilingLimits&) const = default;
};

// FLASHRNN_FUSED_CLUSTER: auto (or unset), 0 (never) or 1 (always where the device and pass have it).
inline FusedCluster cluster_choice() {
    const char* text = std::getenv("FLASHRNN_FUSED_CLUSTER");
    if (!text || !*text || std::string(text) == "auto") return FusedCluster::automatic;
    if (std::string(text) == "0") return FusedCluster::never;
    if (std::string(text) == "1") return FusedCluster::always;
    throw ShapeError(std::string("FLASHRNN_FUSED_CLUSTER=") + text + ": expected auto, 0 or 1");
}

inline TilingLimits tiling_limits() {
    TilingLimits l;
    l.max_threads_per_block =
        environment_integer("FLASHRNN_FUSED_MAX_THREADS_PER_BLOCK", l.max_threads_per_block, 32, 1024);
    l.max_blocks_per_head = environment_integer("FLASHRNN_FUSED_MAX_BLOCKS_PER_HEAD", 0, 0, 1 << 20);
    l.max_row_warps = environment_integer("FLASHRNN_FUSED_MAX_ROW_WARPS", 0, 0, 32);
    l.min_k_blocks = environment_integer("FLASHRNN_FUSED_MIN_K_BLOCKS", 0, 0, 1 << 10);
    l.max_k_blocks = environment_integer("FLASHRNN_FUSED_MAX_K_BLOCKS", 0, 0, 1 << 10);
    l.cluster = cluster_choice();
    l.direct_r_load = environment_integer("FLASHRNN_FUSED_DIRECT_R_LOAD", l.direct_r_load ? 1 : 0, 0, 1) == 1;
    return l;
}

// The request limited as the user asked (the backend's load_kernel, `flashrnn tune --backend fused`).
inline FusedTilingRequest limited(FusedTilingRequest request, const TilingLimits& tuning) {
    request.max_threads_per_block = tuning.max_threads_per_block;
    request.max_blocks_per_head = tuning.max_blocks_per_head;
    request.max_row_warps = tuning.max_row_warps;
    request.min_k_blocks = tuning.min_k_blocks;
    request.max_k_blocks = tuning.max_k_blocks;
    request.cluster = tuning.cluster;
    request.direct_r_load = tuning.direct_r_load;
    return request;
}

} // namespace flashrnn::fused

// The hardware limits a kernel configuration must respect: the "hardware" half of every tiling
// model. Filled from a real GPU (from_device) or from a named preset (preset), so that tiling is
// tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace flashrnn {

// Input element type of a warp-level tensor-core instruction (mma.sync).
enum class MmaInput { fp16, bf16, tf32, fp8 };

// The m x n x k shape of one mma.sync instruction: D[m x n] += A[m x k] B[k x n].
struct MmaShape {
    int m, n, k;
    friend bool operator==(const MmaShape&, const MmaShape&) = default;
};

struct DeviceLimits {
    std::string name;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;

    int sm_count = 0;
    int warp_size = 0;
    int max_threads_per_block = 0;
    int max_threads_per_sm = 0;
    int max_blocks_per_sm = 0;

    int registers_per_sm = 0; // 32-bit registers
    int max_registers_per_block = 0;
    int max_registers_per_thread = 0;          // 255 on every architecture since sm_35
    int register_allocation_unit_per_warp = 0; // registers are handed to a warp in units of this many
    // The launch checks a block's registers as if its warps were a multiple of this (one warp per SM
    // sub-partition in turn): 11 warps of 184 registers are refused, since 12 x 32 x 184 > 64 K.
    int register_sub_partitions = 0;

    std::int64_t shared_memory_per_block = 0;       // without opt-in (48 KiB)
    std::int64_t shared_memory_per_block_optin = 0; // with cudaFuncAttributeMaxDynamicSharedMemorySize
    std::int64_t shared_memory_per_sm = 0;
    std::int64_t reserved_shared_memory_per_block =
        0; // taken by the driver from each block's share of the SM

    // Blocks of one thread-block cluster (their shared memory reachable from each other: distributed
    // shared memory), with the non-portable size where the device allows it; 0: no clusters (before
    // sm_90).
    int max_cluster_blocks = 0;

    std::int64_t l2_cache_bytes = 0;
    // Peak DRAM bandwidth, bytes per second (data sheet, or memory clock x bus width x 2 from the
    // device); 0 when unknown. Cost models (newton/passes.hpp) take a measured fraction of it.
    double memory_bandwidth = 0;
    // Peak SM clock, Hz (data sheet boost clock, or the device's cudaDevAttrClockRate); 0 when unknown.
    // With the SM count it bounds instruction-bound kernels (4 warp schedulers per SM since sm_70).
    double sm_clock = 0;

    int compute_capability() const { return 10 * compute_capability_major + compute_capability_minor; }

    // The mma.sync shape for an input type, or nothing where the architecture has no such instruction
    // (or it is not modelled: only sm_80 and newer are).
    std::optional<MmaShape> mma_shape(MmaInput input) const;

    // Warpgroup MMA (wgmma.mma_async, 4 warps, m64nNk16 for fp16/bf16): sm_90a only.
    bool has_wgmma() const { return compute_capability() == 90; }
};

// Preset names: "h100_sxm", "h200", "a100_80gb", "a40", "rtx3090", "l4".
std::span<const std::string_view> preset_names();

// Throws UnsupportedError listing the valid names for an unknown one.
DeviceLimits preset(std::string_view name);

// Reads the limits of CUDA device `device_index` through the CUDA runtime. Throws DeviceError
// when FlashRNN was built without the CUDA runtime or the device cannot be queried.
DeviceLimits device_limits_of(int device_index);

// A multi-line human-readable summary, for logs and explanations.
std::string describe(const DeviceLimits& limits);

} // namespace flashrnn

#include "flashrnn/tiling/device_limits.hpp"
#include "flashrnn/core/error.hpp"

#include <array>
#include <stdexcept>

namespace flashrnn {
namespace {

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;

// Per-architecture limits. Sources:
//  [CG]  CUDA C++ Programming Guide, "Compute Capabilities", technical specifications per compute
//        capability
//        (https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html): 64 K
//        registers per SM and per block, 255 per thread, 1024 threads per block, 48 KiB shared memory per
//        block without opt-in, 1 KiB reserved per block; shared memory per SM / per block (opt-in) 164 / 163
//        KiB (8.0), 100 / 99 KiB (8.6, 8.9), 228 / 227 KiB (9.0).
//  [TG]  NVIDIA Ampere and Hopper tuning guides (docs.nvidia.com/cuda/{ampere,hopper}-tuning-guide):
//        the same shared-memory capacities; 8.6 has 48 resident warps (1536 threads) and 16 blocks per SM.
//  [CG]  CUDA programming guide, thread block clusters: 8 blocks per cluster portably, 16 on the H100
//        with the non-portable cluster size; none before compute capability 9.0.
//  [OCC] cuda_occupancy.h (CUDA 13.0), cudaOccMaxBlocksPerMultiprocessor: 32 blocks per SM on 8.0 and
//        9.0, 24 on 8.9, 16 on 8.6; register allocation granularity 256 per warp; 4 sub-partitions
//        per SM (cudaOccSubPartitionsPerMultiprocessor), a block's warps rounded up to a multiple of
//        them in the launch's register check (cudaOccMaxBlocksPerSMRegsLimit).
DeviceLimits architecture(int major, int minor) {
    DeviceLimits limits;
    limits.compute_capability_major = major;
    limits.compute_capability_minor = minor;
    limits.warp_size = 32;
    limits.max_threads_per_block = 1024;
    limits.registers_per_sm = 64 * 1024;
    limits.max_registers_per_block = 64 * 1024;
    limits.max_registers_per_thread = 255;
    limits.register_allocation_unit_per_warp = 256;
    limits.register_sub_partitions = 4;
    limits.shared_memory_per_block = 48 * KiB;
    limits.reserved_shared_memory_per_block = 1 * KiB;
    const int cc = 10 * major + minor;
    if (cc == 80) {
        limits.max_threads_per_sm = 2048;
        limits.max_blocks_per_sm = 32;
        limits.shared_memory_per_sm = 164 * KiB;
        limits.shared_memory_per_block_optin = 163 * KiB;
    } else if (cc == 86 || cc == 89) {
        limits.max_threads_per_sm = 1536;
        limits.max_blocks_per_sm = cc == 86 ? 16 : 24;
        limits.shared_memory_per_sm = 100 * KiB;
        limits.shared_memory_per_block_optin = 99 * KiB;
    } else if (cc == 90) {
        limits.max_threads_per_sm = 2048;
        limits.max_blocks_per_sm = 32;
        limits.shared_memory_per_sm = 228 * KiB;
        limits.shared_memory_per_block_optin = 227 * KiB;
        limits.max_cluster_blocks =
            16; // [CG] 8 portable, 16 with cudaFuncAttributeNonPortableClusterSizeAllowed
    } else {
        throw UnsupportedError("flashrnn: no preset architecture for compute capability " +
                               std::to_string(cc));
    }
    return limits;
}

DeviceLimits product(std::string_view name, int major, int minor, int sm_count, std::int64_t l2_cache_bytes,
                     double memory_bandwidth, double sm_clock) {
    DeviceLimits limits = architecture(major, minor);
    limits.name = std::string(name);
    limits.sm_count = sm_count;
    limits.l2_cache_bytes = l2_cache_bytes;
    limits.memory_bandwidth = memory_bandwidth;
    limits.sm_clock = sm_clock;
    return limits;
}

// Product facts (SM count, L2 size) from NVIDIA's whitepapers and data sheets: H100 SXM5 132 SMs and
// 50 MB L2 (Hopper whitepaper); H200 is the same GH100 configuration; A100 108 SMs, 40 MB L2 (Ampere
// A100 whitepaper); A40 84 SMs and RTX 3090 82 SMs, GA102 with 6 MB L2 (Ampere GA102 whitepaper); L4
// 58 SMs (7424 CUDA cores / 128 per SM) and 48 MB L2 (Ada AD104). Peak memory bandwidth from the product
// data sheets: H100 SXM5 3.35 TB/s, H200 4.8 TB/s, A100 80GB SXM 2.039 TB/s, A40 696 GB/s, RTX 3090
// 936 GB/s, L4 300 GB/s. Boost SM clocks from the same data sheets: H100 SXM5 and H200 1980 MHz (the
// H200 of the device tool reports 1980 MHz), A100 1410, A40 1740, RTX 3090 1695, L4 2040.
constexpr std::array<std::string_view, 6> names{"h100_sxm", "h200", "a100_80gb", "a40", "rtx3090", "l4"};

} // namespace

std::optional<MmaShape> DeviceLimits::mma_shape(MmaInput input) const {
    // PTX ISA, "Warp-level matrix multiply-accumulate instructions" (mma.sync shapes per type).
    const int cc = compute_capability();
    if (cc < 80) return std::nullopt;
    switch (input) {
    case MmaInput::fp16:
    case MmaInput::bf16:
        return MmaShape{16, 8, 16};
    case MmaInput::tf32:
        return MmaShape{16, 8, 8};
    case MmaInput::fp8:
        return cc >= 89 ? std::optional(MmaShape{16, 8, 32}) : std::nullopt; // e4m3 / e5m2
    }
    return std::nullopt;
}

std::span<const std::string_view> preset_names() {
    return names;
}

DeviceLimits preset(std::string_view name) {
    // Short names, as the tiling models and most people say them.
    if (name == "h100") name = "h100_sxm";
    if (name == "a100") name = "a100_80gb";
    if (name == "h100_sxm") return product(name, 9, 0, 132, 50 * MiB, 3.35e12, 1.98e9);
    if (name == "h200") return product(name, 9, 0, 132, 50 * MiB, 4.8e12, 1.98e9);
    if (name == "a100_80gb") return product(name, 8, 0, 108, 40 * MiB, 2.039e12, 1.41e9);
    if (name == "a40") return product(name, 8, 6, 84, 6 * MiB, 696e9, 1.74e9);
    if (name == "rtx3090") return product(name, 8, 6, 82, 6 * MiB, 936e9, 1.695e9);
    if (name == "l4") return product(name, 8, 9, 58, 48 * MiB, 300e9, 2.04e9);
    std::string valid;
    for (std::string_view known : names)
        valid += (valid.empty() ? "" : ", ") + std::string(known);
    throw UnsupportedError("flashrnn: unknown device preset '" + std::string(name) +
                           "' (valid presets: " + valid + ")");
}

std::string describe(const DeviceLimits& l) {
    auto line = [](std::string_view key, auto value) {
        return "  " + std::string(key) + ": " + std::to_string(value) + "\n";
    };
    std::string text = l.name + " (sm_" + std::to_string(l.compute_capability()) + ")\n";
    text += line("SMs", l.sm_count);
    text += line("registers per SM", l.registers_per_sm);
    text += line("registers per block", l.max_registers_per_block);
    text += line("registers per thread", l.max_registers_per_thread);
    text += line("shared memory per block (bytes)", l.shared_memory_per_block);
    text += line("shared memory per block, opt-in (bytes)", l.shared_memory_per_block_optin);
    text += line("shared memory per SM (bytes)", l.shared_memory_per_sm);
    text += line("threads per block", l.max_threads_per_block);
    text += line("threads per SM", l.max_threads_per_sm);
    text += line("blocks per SM", l.max_blocks_per_sm);
    text += line("warp size", l.warp_size);
    text += line("blocks per cluster", l.max_cluster_blocks);
    text += line("L2 cache (bytes)", l.l2_cache_bytes);
    text += line("memory bandwidth (GB/s)", static_cast<long long>(l.memory_bandwidth / 1e9));
    text += line("SM clock (MHz)", static_cast<long long>(l.sm_clock / 1e6));
    text += std::string("  wgmma: ") + (l.has_wgmma() ? "yes" : "no") + "\n";
    return text;
}

} // namespace flashrnn

// DeviceLimits from the CUDA runtime; compiled only when the CUDA toolkit is found.
#include "flashrnn/core/error.hpp"
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "flashrnn/tiling/device_limits.hpp"

namespace flashrnn {

DeviceLimits device_limits_of(int device_index) {
    cudaDeviceProp prop{};
    if (const cudaError_t status = cudaGetDeviceProperties(&prop, device_index); status != cudaSuccess)
        throw DeviceError("flashrnn: cannot read the properties of CUDA device " +
                          std::to_string(device_index) + ": " + cudaGetErrorString(status));
    DeviceLimits limits;
    limits.name = prop.name;
    limits.compute_capability_major = prop.major;
    limits.compute_capability_minor = prop.minor;
    limits.sm_count = prop.multiProcessorCount;
    limits.warp_size = prop.warpSize;
    limits.max_threads_per_block = prop.maxThreadsPerBlock;
    limits.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    limits.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    limits.registers_per_sm = prop.regsPerMultiprocessor;
    limits.max_registers_per_block = prop.regsPerBlock;
    limits.max_registers_per_thread = 255;          // not a device property; fixed since sm_35
    limits.register_allocation_unit_per_warp = 256; // cuda_occupancy.h, every architecture since sm_50
    limits.register_sub_partitions = 4;             // cuda_occupancy.h, every architecture since sm_70
    limits.shared_memory_per_block = static_cast<std::int64_t>(prop.sharedMemPerBlock);
    limits.shared_memory_per_block_optin = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
    limits.shared_memory_per_sm = static_cast<std::int64_t>(prop.sharedMemPerMultiprocessor);
    limits.reserved_shared_memory_per_block = static_cast<std::int64_t>(prop.reservedSharedMemPerBlock);
    int cluster_launch = 0;
    if (cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device_index) == cudaSuccess &&
        cluster_launch)
        limits.max_cluster_blocks = prop.major == 9 ? 16 : 8; // non-portable 16 on Hopper, else portable 8
    limits.l2_cache_bytes = prop.l2CacheSize;
    // Memory clock (kHz) x bus width (bits) x 2 (double data rate) / 8: the peak DRAM bandwidth.
    int memory_clock_khz = 0, bus_width_bits = 0;
    if (cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device_index) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device_index) == cudaSuccess)
        limits.memory_bandwidth = 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8;
    int sm_clock_khz = 0; // the peak (boost) clock
    if (cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device_index) == cudaSuccess)
        limits.sm_clock = sm_clock_khz * 1e3;
    return limits;
}

} // namespace flashrnn

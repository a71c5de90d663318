// Support shared by the NVRTC tests (tests/flashrnn, no GPU needed) and their GPU counterpart
// (tests/gpu): a temporary cache folder, LSTM traits, and small kernels that use the traits.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <system_error>

#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "fused_request.hpp"

namespace flashrnn::testing {

// A folder of its own under the system's temporary folder, removed at the end of the test.
struct TemporaryFolder {
    std::filesystem::path path;
    TemporaryFolder() {
        std::random_device random;
        path = std::filesystem::temp_directory_path() /
               ("flashrnn-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
        std::filesystem::create_directories(path);
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

inline FusedKernelTraits lstm_traits(int head_dim = 64, FusedPass pass = FusedPass::forward) {
    return choose_fused_tiling(preset("h100"), request_of(pass, Cell::lstm, DType::bf16, 4, head_dim, 16))
        .traits;
}

// A kernel that uses the traits the way the fused kernels will: block size, shared memory and
// tile counts as compile-time constants, with the traits' invariants checked by the device compiler.
inline const KernelSource kTraitsProbe{"traits_probe.cu",
                                       R"(
static_assert(FusedTraits::row_warps * FusedTraits::k_warps * 32 == FusedTraits::threads_per_block,
              "warps of the block");
static_assert(FusedTraits::row_tiles_per_warp * FusedTraits::row_warps >= FusedTraits::row_tiles_per_block,
              "row tiles covered");
static_assert(FusedTraits::k_tiles_per_warp * FusedTraits::k_warps >= FusedTraits::k_tiles_per_block,
              "k tiles covered");
static_assert(FusedTraits::k_tiles_in_registers + FusedTraits::k_tiles_in_shared_memory ==
              FusedTraits::k_tiles_per_warp, "every R tile of a warp is held somewhere");
static_assert(FusedTraits::row_blocks * FusedTraits::units_per_block == FusedTraits::head_dim, "units split");

extern "C" __global__ void __launch_bounds__(FusedTraits::threads_per_block)
traits_probe(const float* in, float* out) {
    // One value per R tile a thread holds in registers, summed so that none is optimised away.
    float fragments[FusedTraits::row_tiles_per_warp * FusedTraits::k_tiles_in_registers + 1];
    #pragma unroll
    for (int i = 0; i < FusedTraits::row_tiles_per_warp * FusedTraits::k_tiles_in_registers + 1; ++i)
        fragments[i] = in[i * FusedTraits::threads_per_block + threadIdx.x];
    float sum = 0;
    #pragma unroll
    for (int i = 0; i < FusedTraits::row_tiles_per_warp * FusedTraits::k_tiles_in_registers + 1; ++i)
        sum += fragments[i] * fragments[(i * 7) % (FusedTraits::row_tiles_per_warp * FusedTraits::k_tiles_in_registers + 1)];
    out[blockIdx.x * FusedTraits::threads_per_block + threadIdx.x] = sum;
}
)",
                                       "traits_probe",
                                       {}};

// A kernel that needs more than 32 registers: compiled with --maxrregcount=32 it spills.
inline const KernelSource kSpiller{"spiller.cu",
                                   R"(
template <int N> __global__ void spiller(const float* in, float* out) {
    float values[N];
    #pragma unroll
    for (int i = 0; i < N; ++i) values[i] = in[i * blockDim.x + threadIdx.x];
    float sum = 0;
    #pragma unroll
    for (int i = 0; i < N; ++i)
        #pragma unroll
        for (int j = 0; j < N; ++j) sum += values[i] * values[(i + j) % N];
    out[threadIdx.x] = sum;
}
)",
                                   "spiller<64>",
                                   {}};

inline CompileOptions in_folder(const std::filesystem::path& dir) {
    CompileOptions options;
    options.cache_dir = dir;
    return options;
}

} // namespace flashrnn::testing

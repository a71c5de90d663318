// The launch configuration of the alternating backend's pointwise kernels, chosen by ConstrINT.
#pragma once

#include "flashrnn/tiling/device_limits.hpp"

#include <cstdint>
#include <string>

namespace flashrnn {

struct PointwiseProblem {
    std::int64_t elements;     // elements per time step: batch x heads x head dimension
    int head_dim;              // a vector access never crosses a head's row
    int bytes_per_element;     // 2 (bf16, fp16) or 4 (fp32)
    int max_vector_bytes = 16; // the alignment every tensor's address allows (a power of two <= 16)
    // The most threads a block of the compiled kernel can have (its register use, read back from the
    // compiled kernel with cudaFuncGetAttributes); 0: only the device's limit applies.
    int max_threads_per_block = 0;
};

struct PointwiseLaunch {
    int threads_per_block;
    int vector_width;        // elements per memory access (at most 16 bytes)
    int elements_per_thread; // a multiple of vector_width
    std::int64_t blocks;
};

// Solves the ConstrINT model: threads a multiple of the warp size within the block limit, 16-byte
// (or narrower) vector accesses that divide the head dimension, enough blocks to cover the elements
// and to occupy every SM twice when there is that much work. Preferences, in order: the widest
// vector, the fewest elements per thread, the most threads per block. Throws ShapeError
// for a problem without elements and TilingError naming the conflict when nothing fits.
PointwiseLaunch choose_pointwise_launch(const DeviceLimits& limits, const PointwiseProblem& problem);

std::string describe(const PointwiseLaunch& launch);

} // namespace flashrnn

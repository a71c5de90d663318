// The fused Newton forward's inputs of a tile, staged in shared memory and copied there asynchronously
// (cp.async) while the warp solves the tile before: the global loads are in flight during the Newton
// iterations instead of ahead of them, and the inputs hold no registers between the evaluations
// (FlashLSTM's 3 x E values were a fifth of its registers). Each warp owns two buffers (this tile's,
// the next one's); a buffer holds, per gate, the warp's span of 32 E elements as 32-bit words (two
// 16-bit elements to a word) in memory order, with 4 words of padding after every 32, so that the
// lane-strided copies and each thread's chunk, read back as 16-byte loads, are free of bank conflicts
// (the layout of scan::WarpStaging's packed words).
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "cuda/scan/chunk_io.cuh"

namespace flashrnn::cuda::newton {

template <class T, int E, int G> struct InputStaging {
    static_assert(E % 4 == 0, "a thread's chunk is read as 8- or 16-byte loads");
    static constexpr int kWordsPerChunk = E * static_cast<int>(sizeof(T)) / 4; // a thread's, one gate
    static constexpr int kWordsPerSpan = scan::kWarpSize * kWordsPerChunk;     // a warp's, one gate
    static constexpr int kPaddedWordsPerSpan = kWordsPerSpan + 4 * (kWordsPerSpan / scan::kWarpSize);
    static constexpr int kBytesPerWarp = 2 * G * kPaddedWordsPerSpan * 4;

    std::uint32_t* words; // this warp's two buffers, [buffer][gate][kPaddedWordsPerSpan]

    // Word j * 32 + lane of a span (the lane-strided copies) and a thread's chunk's first word.
    static __device__ __forceinline__ int strided(int j, int lane) {
        return j * (scan::kWarpSize + 4) + lane;
    }
    static __device__ __forceinline__ int chunk_start(int lane) {
        const auto word = static_cast<unsigned>(lane * kWordsPerChunk);
        return static_cast<int>(word + 4 * (word / scan::kWarpSize));
    }
    __device__ __forceinline__ std::uint32_t* span_of(int buffer, int gate) const {
        return words + (buffer * G + gate) * kPaddedWordsPerSpan;
    }

    // Starts copying elements [span, span + 32 E) of every gate's row (gate g's at rows + g * plane)
    // into `buffer`; elements at or past `length` read as zero. The tail span, and 16-bit rows that are
    // not 4-byte aligned, are read synchronously. Every lane of the warp calls it, once per buffer fill.
    __device__ __forceinline__ void copy_async(const T* rows, std::int64_t plane, std::int64_t span,
                                               std::int64_t length, int buffer) const {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const T* row = rows + g * plane;
            std::uint32_t* to = span_of(buffer, g);
            if (span + scan::kWarpSize * E <= length &&
                (reinterpret_cast<std::uintptr_t>(row + span) & 3) == 0) {
                const auto* from = reinterpret_cast<const std::uint32_t*>(row + span) + lane;
#pragma unroll
                for (int j = 0; j < kWordsPerChunk; ++j)
                    __pipeline_memcpy_async(to + strided(j, lane), from + j * scan::kWarpSize, 4);
            } else {
#pragma unroll
                for (int j = 0; j < kWordsPerChunk; ++j) {
                    const int word = j * scan::kWarpSize + lane;
                    const std::int64_t i = span + word * (4 / static_cast<int>(sizeof(T)));
                    if constexpr (sizeof(T) == 4) {
                        to[strided(j, lane)] = i < length ? __float_as_uint(row[i]) : 0u;
                    } else {
                        const std::uint16_t first = i < length ? scan::bits_of(row[i]) : 0;
                        const std::uint16_t second = i + 1 < length ? scan::bits_of(row[i + 1]) : 0;
                        to[strided(j, lane)] =
                            static_cast<std::uint32_t>(first) | (static_cast<std::uint32_t>(second) << 16);
                    }
                }
            }
        }
        __pipeline_commit();
    }

    // Waits for the copies into the buffer filled before the last copy_async (at most one fill stays in
    // flight), for every lane of the warp.
    static __device__ __forceinline__ void wait_for_previous_fill() {
        __pipeline_wait_prior(1);
        __syncwarp();
    }

    // The thread's chunk of gate g from `buffer`, as fp32 values in memory order.
    __device__ __forceinline__ void read(int buffer, int g, float (&values)[E]) const {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
        const std::uint32_t* from = span_of(buffer, g) + chunk_start(lane);
        std::uint32_t chunk[kWordsPerChunk];
        scan::read_shared_words(from, chunk);
#pragma unroll
        for (int k = 0; k < kWordsPerChunk; ++k) {
            if constexpr (sizeof(T) == 4)
                values[k] = __uint_as_float(chunk[k]);
            else
                scan::unpack_pair<T>(chunk[k], values[2 * k], values[2 * k + 1]);
        }
    }
};

} // namespace flashrnn::cuda::newton

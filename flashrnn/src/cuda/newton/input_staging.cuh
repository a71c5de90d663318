// The fused Newton forward's inputs of a tile, staged in shared memory and copied there asynchronously
// (cp.async) while the warp solves the tile before: the global loads are in flight during the Newton
// iterations instead of ahead of them, and the inputs hold no registers between the evaluations
// (FlashLSTM's 3 x E values were a fifth of its registers). Each warp owns two buffers (this tile's,
// the next one's); a buffer holds, per gate, the warp's span of 32 E elements as 32-bit words (two
// 16-bit elements to a word) in memory order, with 4 words of padding after every 32, so that the
// lane-strided copies and each thread's chunk, read back as 16-byte loads, are free of bank conflicts
// (the layout of scan::WarpStaging's packed words). Aligned spans are copied as 16-byte packets; fp32
// states of a tile that is not whole, or not aligned, leave through a buffer whose inputs are read;
// 16-bit inputs are widened to fp32 once per tile (kWidened).
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
    // 16-bit inputs are read by every evaluation of a tile: its first read (the guess's) writes them back
    // as fp32 into a region of their own (per gate, the padded layout of an fp32 span), which the others
    // read instead (no unpacking per evaluation: the kernel is instruction-bound).
    static constexpr bool kWidened = sizeof(T) < 4;
    static constexpr int kWideWordsPerSpan = scan::kWarpSize * E;
    static constexpr int kPaddedWideWordsPerSpan =
        kWideWordsPerSpan + 4 * (kWideWordsPerSpan / scan::kWarpSize);
    static constexpr int kBufferWords = 2 * G * kPaddedWordsPerSpan;
    static constexpr int kBytesPerWarp = (kBufferWords + (kWidened ? G * kPaddedWideWordsPerSpan : 0)) * 4;

    std::uint32_t* words; // this warp's two buffers, [buffer][gate][kPaddedWordsPerSpan], then the widened
                          // inputs (16-bit), [gate][kPaddedWideWordsPerSpan]

    // Word j * 32 + lane of a span (the lane-strided copies) and a thread's chunk's first word.
    static __device__ __forceinline__ int strided(int j, int lane) {
        return j * (scan::kWarpSize + 4) + lane;
    }
    static __device__ __forceinline__ int padded(int word) {
        return static_cast<int>(static_cast<unsigned>(word) +
                                4 * (static_cast<unsigned>(word) / scan::kWarpSize));
    }
    static __device__ __forceinline__ int chunk_start(int lane) { return padded(lane * kWordsPerChunk); }
    // A span as 16-byte packets (4 words, never across a padding), packet j * 32 + lane to a lane: a
    // quarter of the instructions of 4-byte words (the kernel is instruction-bound). None where a
    // thread's chunk is not whole packets (16-bit elements, E = 4).
    static constexpr int kPacketsPerLane = kWordsPerChunk % 4 == 0 ? kWordsPerChunk / 4 : 0;
    // Packet j of the lane: its words 4 (j * 32 + lane) + [0, 4) in the span, after the padding of the
    // 4 j rows of 32 words before it and the lane's own.
    static constexpr int kPacketStride = 4 * (scan::kWarpSize + 4);
    static __device__ __forceinline__ int packet_start(int lane) { return padded(4 * lane); }
    __device__ __forceinline__ std::uint32_t* span_of(int buffer, int gate) const {
        return words + (buffer * G + gate) * kPaddedWordsPerSpan;
    }

    // Whether the rows rows + g * plane, g < `rows_count`, are all 16-byte aligned at element `span`: one
    // test for every row (the kernel is instruction-bound; a test per row cost more than the copies).
    template <class U>
    static __device__ __forceinline__ bool packets_aligned(const U* rows, std::int64_t plane,
                                                           std::int64_t span) {
        return ((reinterpret_cast<std::uintptr_t>(rows + span) |
                 static_cast<std::uintptr_t>(plane) * sizeof(U)) &
                15) == 0;
    }

    // copy_async of a whole span whose rows (gate g's at span + g * plane) start at 16 bytes.
    __device__ __forceinline__ void copy_packets(const T* span, std::int64_t plane, int buffer) const
        requires(kPacketsPerLane > 0) {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
        const auto* from = reinterpret_cast<const std::uint32_t*>(span) + 4 * lane;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            std::uint32_t* into = span_of(buffer, g) + packet_start(lane);
#pragma unroll
            for (int j = 0; j < kPacketsPerLane; ++j)
                __pipeline_memcpy_async(into + j * kPacketStride, from + j * 4 * scan::kWarpSize, 16);
            from += plane * static_cast<std::int64_t>(sizeof(T)) / 4;
        }
        __pipeline_commit();
    }

    // Starts copying elements [span, span + 32 E) of every gate's row (gate g's at rows + g * plane)
    // into `buffer`; elements at or past `length` read as zero. The tail span, and 16-bit rows that are
    // not 4-byte aligned, are read synchronously. Every lane of the warp calls it, once per buffer fill.
    __device__ __forceinline__ void copy_async(const T* rows, std::int64_t plane, std::int64_t span,
                                               std::int64_t length, int buffer) const {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
        const bool whole = span + scan::kWarpSize * E <= length;
        if constexpr (kPacketsPerLane > 0) {
            if (whole && packets_aligned(rows, plane, span)) {
                copy_packets(rows + span, plane, buffer);
                return;
            }
        }
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const T* row = rows + g * plane;
            std::uint32_t* to = span_of(buffer, g);
            if (whole && (reinterpret_cast<std::uintptr_t>(row + span) & 3) == 0) {
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

    // Writes the thread's E fp32 values of each of N rows (row k at rows + k * plane, memory order) to
    // elements [span, span + 32 E) of the rows, those before `length`, through slots [0, N) (gates'
    // spans) of `buffer`, which every lane has finished reading: the transposition of scan::store_chunk
    // with 16-byte shared and global accesses. Every lane of the warp calls it.
    template <int N>
    __device__ __forceinline__ void store(int buffer, float* rows, std::int64_t plane, std::int64_t span,
                                          std::int64_t length, const float (&values)[N][E]) const
        requires(sizeof(T) == 4 && N <= G) {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
        __syncwarp(); // every lane has read the slots' inputs
#pragma unroll
        for (int n = 0; n < N; ++n)
#pragma unroll
            for (int k = 0; k < E; k += 4)
                *reinterpret_cast<float4*>(span_of(buffer, n) + chunk_start(lane) + k) =
                    make_float4(values[n][k], values[n][k + 1], values[n][k + 2], values[n][k + 3]);
        __syncwarp();
        if (span + scan::kWarpSize * E <= length && packets_aligned(rows, plane, span)) {
            float* into = rows + span + 4 * lane;
#pragma unroll
            for (int n = 0; n < N; ++n) {
                const std::uint32_t* from = span_of(buffer, n) + packet_start(lane);
#pragma unroll
                for (int j = 0; j < kPacketsPerLane; ++j)
                    *reinterpret_cast<float4*>(into + j * 4 * scan::kWarpSize) =
                        *reinterpret_cast<const float4*>(from + j * kPacketStride);
                into += plane;
            }
        } else {
#pragma unroll
            for (int n = 0; n < N; ++n)
#pragma unroll
                for (int j = 0; j < E; ++j) {
                    const std::int64_t i = span + j * scan::kWarpSize + lane;
                    if (i < length)
                        rows[n * plane + i] = __uint_as_float(span_of(buffer, n)[strided(j, lane)]);
                }
        }
    }

    // The thread's chunk of gate g (fp32, memory order) into the widened inputs, and back (16-bit inputs).
    __device__ __forceinline__ float* widened(int g) const {
        const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
        return reinterpret_cast<float*>(words + kBufferWords + g * kPaddedWideWordsPerSpan +
                                        padded(lane * E));
    }
    __device__ __forceinline__ void widen(int g, const float (&values)[E]) const requires(kWidened) {
        float* to = widened(g);
#pragma unroll
        for (int k = 0; k < E; k += 4)
            *reinterpret_cast<float4*>(to + k) =
                make_float4(values[k], values[k + 1], values[k + 2], values[k + 3]);
    }
    __device__ __forceinline__ void read_widened(int g, float (&values)[E]) const requires(kWidened) {
        std::uint32_t chunk[E];
        scan::read_shared_words(reinterpret_cast<const std::uint32_t*>(widened(g)), chunk);
#pragma unroll
        for (int k = 0; k < E; ++k)
            values[k] = __uint_as_float(chunk[k]);
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

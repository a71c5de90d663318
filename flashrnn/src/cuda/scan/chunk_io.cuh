// Loading and storing a thread's chunk: elements [start, start + E) of one row, clipped to the row's
// length. Three schemes (ScanAccess): direct element-wise access; shared, where each warp reads its
// span of 32 * E elements coalesced (lane-strided) and transposes it through shared memory; vector,
// the thread's own chunk in consecutive aligned packets of up to 16 bytes (the rows must be aligned:
// the host checks, else it uses shared). With several packets per thread, one warp access reads one
// packet of every lane's chunk, spread over the warp's span, and the next accesses the rest of the
// same sectors (from L1 where it still holds them): no shared-memory round trip and no per-element
// loads, which is what 16-bit elements need (twice the elements per byte of fp32, so twice the
// instructions per byte moved). Measured on the H100 (docs/benchmarks.md): better than the
// transposed lane-strided reading for bf16, worse for fp32 with 16 elements per thread; the model
// prefers shared access anyway. Loading is split in two:
// fetch() issues the global loads into registers (so that later tiles' loads are in flight while this
// tile is scanned) and unpack() turns them into fp32 values in memory order.
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/scan/warp_shuffle.cuh"
#include "flashrnn/scan_launch.hpp"

namespace flashrnn::cuda::scan {

// Shared memory of one warp for the transposition: 32 * E floats, padded by one word every 32 words
// so that both the lane-strided and the chunk-wise accesses are free of bank conflicts.
template <int E> struct WarpStaging {
    static constexpr int kWords = kWarpSize * E + E;
    float words[kWords];
    static __device__ __forceinline__ int padded(int i) { return i + i / kWarpSize; }
};

// Elements per packet in vector access: up to 16 bytes, at most the chunk.
template <class T, int E> inline constexpr int kPacketElements = (E * sizeof(T) <= 16) ? E : 16 / sizeof(T);

// Whether a chunk goes through the warp's staging area: shared access only.
template <class T, int E, ScanAccess A> inline constexpr bool kStaged = A == ScanAccess::shared;

// The warps' staging areas of a block (`used`: kStaged of its chunks), or nothing.
template <bool used, int E, int kThreads> struct StagingStorage {
    WarpStaging<E> warps[kThreads / kWarpSize];
    __device__ __forceinline__ float* warp_words(int warp) { return warps[warp].words; }
};
template <int E, int kThreads> struct StagingStorage<false, E, kThreads> {
    __device__ __forceinline__ float* warp_words(int) { return nullptr; }
};

template <class T, int E, ScanAccess A> struct Chunk {
    // direct: the thread's elements in memory order; shared: the elements lane + 32 j of the warp's
    // span, j = 0 .. E-1.
    T raw[E];

    // `row` is the row's first element; `start` the chunk's first element (thread * E into the tile).
    __device__ __forceinline__ void fetch(const T* row, std::int64_t start, std::int64_t length, T fill) {
        if constexpr (A == ScanAccess::shared) {
            const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
            const std::int64_t span = start - static_cast<std::int64_t>(lane) * E;
            if (span + kWarpSize * E <= length) { // the whole span in the row: no per-element test
                const T* source = row + span + lane;
#pragma unroll
                for (int j = 0; j < E; ++j)
                    raw[j] = source[j * kWarpSize];
            } else {
#pragma unroll
                for (int j = 0; j < E; ++j) {
                    const std::int64_t i = span + j * kWarpSize + lane;
                    raw[j] = i < length ? row[i] : fill;
                }
            }
        } else if (start + E <= length) {
#pragma unroll
            for (int e = 0; e < E; ++e)
                raw[e] = row[start + e];
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                raw[e] = start + e < length ? row[start + e] : fill;
        }
    }

    // The thread's elements in memory order. `staging` is the warp's shared memory (kStaged only);
    // every lane of the warp must call it.
    __device__ __forceinline__ void unpack(float (&values)[E], float* staging) const {
        if constexpr (A == ScanAccess::shared) {
            const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
#pragma unroll
            for (int j = 0; j < E; ++j)
                staging[WarpStaging<E>::padded(j * kWarpSize + lane)] = to_float(raw[j]);
            __syncwarp();
#pragma unroll
            for (int e = 0; e < E; ++e)
                values[e] = staging[WarpStaging<E>::padded(lane * E + e)];
            __syncwarp(); // the staging area is reused by the next tensor
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                values[e] = to_float(raw[e]);
        }
    }
};

// Vector access: the chunk as E / V consecutive packets of V elements, kept packed in registers until
// unpacked.
template <class T, int E> struct Chunk<T, E, ScanAccess::vector> {
    static constexpr int V = kPacketElements<T, E>;
    static_assert(E % V == 0, "a chunk is whole packets");
    Packet<T, V> packets[E / V];

    __device__ __forceinline__ void fetch(const T* row, std::int64_t start, std::int64_t length, T fill) {
        if (start + E <= length) {
            const auto* source = reinterpret_cast<const Packet<T, V>*>(row + start);
#pragma unroll
            for (int j = 0; j < E / V; ++j)
                packets[j] = source[j];
        } else {
#pragma unroll
            for (int j = 0; j < E / V; ++j)
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const std::int64_t i = start + j * V + v;
                    packets[j].values[v] = i < length ? row[i] : fill;
                }
        }
    }

    __device__ __forceinline__ void unpack(float (&values)[E], float*) const {
#pragma unroll
        for (int j = 0; j < E / V; ++j)
#pragma unroll
            for (int v = 0; v < V; ++v)
                values[j * V + v] = to_float(packets[j].values[v]);
    }
};

// Stores the thread's elements (memory order) to [start, start + E), clipped to the length. Every lane
// of the warp must call it (kStaged).
template <class T, int E, ScanAccess A>
__device__ __forceinline__ void store_chunk(T* row, std::int64_t start, std::int64_t length, const float (&values)[E],
                                            float* staging) {
    if constexpr (A == ScanAccess::shared) {
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
#pragma unroll
        for (int e = 0; e < E; ++e)
            staging[WarpStaging<E>::padded(lane * E + e)] = values[e];
        __syncwarp();
        const std::int64_t span = start - static_cast<std::int64_t>(lane) * E;
        if (span + kWarpSize * E <= length) {
            T* target = row + span + lane;
#pragma unroll
            for (int j = 0; j < E; ++j)
                target[j * kWarpSize] = from_float<T>(staging[WarpStaging<E>::padded(j * kWarpSize + lane)]);
        } else {
#pragma unroll
            for (int j = 0; j < E; ++j) {
                const std::int64_t i = span + j * kWarpSize + lane;
                const float value = staging[WarpStaging<E>::padded(j * kWarpSize + lane)];
                if (i < length) row[i] = from_float<T>(value);
            }
        }
        __syncwarp();
    } else if (start + E <= length) {
        if constexpr (A == ScanAccess::vector) {
            constexpr int V = kPacketElements<T, E>;
            auto* target = reinterpret_cast<Packet<T, V>*>(row + start);
#pragma unroll
            for (int j = 0; j < E / V; ++j) {
                Packet<T, V> packet;
#pragma unroll
                for (int v = 0; v < V; ++v)
                    packet.values[v] = from_float<T>(values[j * V + v]);
                target[j] = packet;
            }
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                row[start + e] = from_float<T>(values[e]);
        }
    } else {
#pragma unroll
        for (int e = 0; e < E; ++e)
            if (start + e < length) row[start + e] = from_float<T>(values[e]);
    }
}

} // namespace flashrnn::cuda::scan

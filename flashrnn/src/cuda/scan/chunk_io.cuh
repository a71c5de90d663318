// Loading and storing a thread's chunk: elements [start, start + E) of one row, clipped to the row's
// length. Three schemes (ScanAccess): direct element-wise access; shared, where each warp reads its
// span of 32 * E elements coalesced (lane-strided) and transposes it through shared memory; vector, in
// aligned packets of up to 16 bytes (the rows must be aligned: the host checks, else it uses shared).
// Loading is split in two: fetch() issues the global loads into registers (so that the next tile's
// loads are in flight while this tile is scanned) and unpack() turns them into fp32 values in memory
// order.
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

template <ScanAccess A, int E, int kThreads> struct StagingStorage {
    __device__ __forceinline__ float* warp_words(int) { return nullptr; }
};
template <int E, int kThreads> struct StagingStorage<ScanAccess::shared, E, kThreads> {
    WarpStaging<E> warps[kThreads / kWarpSize];
    __device__ __forceinline__ float* warp_words(int warp) { return warps[warp].words; }
};

// Elements per packet in vector access: up to 16 bytes, at most the chunk.
template <class T, int E> inline constexpr int kPacketElements = (E * sizeof(T) <= 16) ? E : 16 / sizeof(T);

template <class T, int E, ScanAccess A> struct Chunk {
    // direct, vector: the thread's elements in memory order; shared: the elements lane + 32 j of the
    // warp's span, j = 0 .. E-1.
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
        } else if constexpr (A == ScanAccess::vector) {
            constexpr int V = kPacketElements<T, E>;
            if (start + E <= length) {
#pragma unroll
                for (int p = 0; p < E / V; ++p) {
                    const Packet<T, V> packet = *reinterpret_cast<const Packet<T, V>*>(row + start + p * V);
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        raw[p * V + v] = packet.values[v];
                }
            } else {
#pragma unroll
                for (int e = 0; e < E; ++e)
                    raw[e] = start + e < length ? row[start + e] : fill;
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

    // The thread's elements in memory order. `staging` is the warp's shared memory (shared access
    // only); every lane of the warp must call it.
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

// Stores the thread's elements (memory order) to [start, start + E), clipped to the length. Every lane
// of the warp must call it (shared access).
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
    } else if constexpr (A == ScanAccess::vector) {
        constexpr int V = kPacketElements<T, E>;
        if (start + E <= length) {
#pragma unroll
            for (int p = 0; p < E / V; ++p) {
                Packet<T, V> packet;
#pragma unroll
                for (int v = 0; v < V; ++v)
                    packet.values[v] = from_float<T>(values[p * V + v]);
                *reinterpret_cast<Packet<T, V>*>(row + start + p * V) = packet;
            }
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                if (start + e < length) row[start + e] = from_float<T>(values[e]);
        }
    } else if (start + E <= length) {
#pragma unroll
        for (int e = 0; e < E; ++e)
            row[start + e] = from_float<T>(values[e]);
    } else {
#pragma unroll
        for (int e = 0; e < E; ++e)
            if (start + e < length) row[start + e] = from_float<T>(values[e]);
    }
}

} // namespace flashrnn::cuda::scan

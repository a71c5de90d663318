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
#include <cstring>
#include <type_traits>

#include "cuda/common/elements.cuh"
#include "cuda/scan/warp_shuffle.cuh"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::cuda::scan {

// Shared memory of one warp for the transposition: 32 * E floats, padded by one word every 32 words
// so that both the lane-strided and the chunk-wise accesses are free of bank conflicts.
template <int E> struct alignas(16) WarpStaging {
    static constexpr int kWords = kWarpSize * E + E;
    float words[kWords];
    static __device__ __forceinline__ int padded(int i) { return i + i / kWarpSize; }
    // 16-bit elements are staged packed, two to a 32-bit word (16 E words): 4 words of padding after
    // every 32, so that both the lane-strided words and each thread's E / 2 consecutive words, read
    // as 16-byte (8-byte for E = 4) shared loads, are free of bank conflicts.
    static __device__ __forceinline__ int padded_pair(int w) { return w + 4 * (w / kWarpSize); }
    static_assert(kWarpSize * E / 2 + 4 * (kWarpSize * E / 2 / kWarpSize) <= kWords,
                  "the packed staging fits");
};

// Two 16-bit elements in one 32-bit word (the first in the low half, as in memory) and back.
template <class T> __device__ __forceinline__ std::uint16_t bits_of(T value) {
    static_assert(sizeof(T) == 2);
    std::uint16_t bits;
    memcpy(&bits, &value, 2);
    return bits;
}
template <class T> __device__ __forceinline__ T from_bits(std::uint16_t bits) {
    T value;
    memcpy(&value, &bits, 2);
    return value;
}
template <class T> __device__ __forceinline__ std::uint32_t pack_pair(float first, float second) {
    return static_cast<std::uint32_t>(bits_of(from_float<T>(first))) |
           (static_cast<std::uint32_t>(bits_of(from_float<T>(second))) << 16);
}
template <class T>
__device__ __forceinline__ void unpack_pair(std::uint32_t word, float& first, float& second) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) { // a bf16 is the upper half of its fp32
        first = __uint_as_float(word << 16);
        second = __uint_as_float(word & 0xffff0000u);
    } else {
        first = to_float(from_bits<T>(static_cast<std::uint16_t>(word & 0xffffu)));
        second = to_float(from_bits<T>(static_cast<std::uint16_t>(word >> 16)));
    }
}

// N consecutive 32-bit words from 16-byte aligned shared memory (8-byte where N is not a multiple of 4),
// as 16-byte (8-byte) loads.
template <int N>
__device__ __forceinline__ void read_shared_words(const std::uint32_t* from, std::uint32_t (&to)[N]) {
    static_assert(N % 2 == 0, "whole 8-byte loads");
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int k = 0; k < N; k += 4) {
            const uint4 v = *reinterpret_cast<const uint4*>(from + k);
            to[k] = v.x, to[k + 1] = v.y, to[k + 2] = v.z, to[k + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k += 2) {
            const uint2 v = *reinterpret_cast<const uint2*>(from + k);
            to[k] = v.x, to[k + 1] = v.y;
        }
    }
}

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

// Shared access of 16-bit elements: the warp's span is read as 32-bit words (two elements each,
// lane-strided: 128 bytes per warp access instead of 64) where the row is 4-byte aligned, staged
// packed and read back by each thread as its E / 2 consecutive words in 16-byte shared loads. Half
// the global accesses and a quarter of the shared ones of element-wise staging, and half the
// registers for the raw loads. Rows that are not 4-byte aligned, and the row's last span, are read
// element by element into the same words.
template <class T, int E>
requires(sizeof(T) == 2) struct Chunk<T, E, ScanAccess::shared> {
    static constexpr int W = E / 2; // words per thread
    static_assert(E % 4 == 0, "whole 8-byte shared accesses per thread");
    std::uint32_t words[W]; // the words lane + 32 j of the warp's span, j = 0 .. W-1

    __device__ __forceinline__ void fetch(const T* row, std::int64_t start, std::int64_t length, T fill) {
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        const std::int64_t span = start - static_cast<std::int64_t>(lane) * E; // a multiple of 32 E: even
        if (span + kWarpSize * E <= length && (reinterpret_cast<std::uintptr_t>(row) & 3) == 0) {
            const auto* source = reinterpret_cast<const std::uint32_t*>(row + span) + lane;
#pragma unroll
            for (int j = 0; j < W; ++j)
                words[j] = source[j * kWarpSize];
        } else {
            const std::uint16_t fill_bits = bits_of(fill);
#pragma unroll
            for (int j = 0; j < W; ++j) {
                const std::int64_t i = span + 2 * (j * kWarpSize + lane);
                const std::uint16_t first = i < length ? bits_of(row[i]) : fill_bits;
                const std::uint16_t second = i + 1 < length ? bits_of(row[i + 1]) : fill_bits;
                words[j] = static_cast<std::uint32_t>(first) | (static_cast<std::uint32_t>(second) << 16);
            }
        }
    }

    __device__ __forceinline__ void unpack(float (&values)[E], float* staging) const {
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        auto* packed = reinterpret_cast<std::uint32_t*>(staging);
#pragma unroll
        for (int j = 0; j < W; ++j)
            packed[WarpStaging<E>::padded_pair(j * kWarpSize + lane)] = words[j];
        __syncwarp();
        std::uint32_t mine[W];
        read_shared_words<W>(packed + WarpStaging<E>::padded_pair(lane * W), mine);
#pragma unroll
        for (int k = 0; k < W; ++k)
            unpack_pair<T>(mine[k], values[2 * k], values[2 * k + 1]);
        __syncwarp(); // the staging area is reused by the next tensor
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
__device__ __forceinline__ void store_chunk(T* row, std::int64_t start, std::int64_t length,
                                            const float (&values)[E], float* staging) {
    if constexpr (A == ScanAccess::shared && sizeof(T) == 2) { // packed staging, as Chunk's
        constexpr int W = E / 2;
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        auto* packed = reinterpret_cast<std::uint32_t*>(staging);
        std::uint32_t* mine = packed + WarpStaging<E>::padded_pair(lane * W);
        if constexpr (W % 4 == 0) {
#pragma unroll
            for (int k = 0; k < W; k += 4)
                *reinterpret_cast<uint4*>(mine + k) =
                    uint4{pack_pair<T>(values[2 * k], values[2 * k + 1]),
                          pack_pair<T>(values[2 * k + 2], values[2 * k + 3]),
                          pack_pair<T>(values[2 * k + 4], values[2 * k + 5]),
                          pack_pair<T>(values[2 * k + 6], values[2 * k + 7])};
        } else {
#pragma unroll
            for (int k = 0; k < W; k += 2)
                *reinterpret_cast<uint2*>(mine + k) =
                    uint2{pack_pair<T>(values[2 * k], values[2 * k + 1]),
                          pack_pair<T>(values[2 * k + 2], values[2 * k + 3])};
        }
        __syncwarp();
        const std::int64_t span = start - static_cast<std::int64_t>(lane) * E;
        if (span + kWarpSize * E <= length && (reinterpret_cast<std::uintptr_t>(row) & 3) == 0) {
            auto* target = reinterpret_cast<std::uint32_t*>(row + span) + lane;
#pragma unroll
            for (int j = 0; j < W; ++j)
                target[j * kWarpSize] = packed[WarpStaging<E>::padded_pair(j * kWarpSize + lane)];
        } else {
#pragma unroll
            for (int j = 0; j < W; ++j) {
                const std::uint32_t word = packed[WarpStaging<E>::padded_pair(j * kWarpSize + lane)];
                const std::int64_t i = span + 2 * (j * kWarpSize + lane);
                if (i < length) row[i] = from_bits<T>(static_cast<std::uint16_t>(word & 0xffffu));
                if (i + 1 < length) row[i + 1] = from_bits<T>(static_cast<std::uint16_t>(word >> 16));
            }
        }
        __syncwarp();
    } else if constexpr (A == ScanAccess::shared) {
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

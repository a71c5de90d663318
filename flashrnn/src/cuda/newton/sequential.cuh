// The sequential baseline (passes.cu launches it): one thread per sequence steps h_t = f(h_{t-1}, x_t)
// in fp32 registers, and the backward from the last step. Rows run along T (newton/problem.hpp), so
// the 32 threads of a warp reading their own step t touch 32 rows: a 32-byte sector per 4-byte value,
// and the L1 cannot hold 32 steps of every row for many warps (measured: 1.6-4.1 us per step at 65536
// sequences against 0.5 us at 4096). Instead each warp stages tiles of its 32 sequences x K steps
// through shared memory: copied in row order (whole sectors) and asynchronously (cp.async) while the
// warp steps through the tile before, written back in row order. The cells are evaluated with the
// accurate exp and reciprocal of the fused forward (kSequentialActivations).
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "cuda/newton/cell_with_activations.cuh"
#include "cuda/newton/kernels.cuh"
#include "newton/sequential_tiles.hpp"

namespace flashrnn::cuda::newton {

using flashrnn::newton::kSequentialTileBuffers;
using flashrnn::newton::kSequentialTileSequences;
using flashrnn::newton::sequential_backward_slots;
using flashrnn::newton::sequential_buffer_words;
using flashrnn::newton::sequential_forward_slots;
using flashrnn::newton::sequential_row_words;
using flashrnn::newton::sequential_tile_steps;

constexpr int kSequentialThreads = kSequentialTileSequences; // one warp per block: the warps share nothing
// Each step waits on the one before: the activations' latency is the step's. exp and a reciprocal
// (absolute error about 1e-7, as the fused forward's accurate evaluation) instead of expf, tanhf and an
// IEEE division, whose longer chains took 1.1-2.1x longer forward on the H200 (docs/benchmarks.md,
// "The sequential kernels' copies and activations").
constexpr Activations kSequentialActivations = Activations::exp_reciprocal;

// One buffer of a warp's tile (newton/sequential_tiles.hpp): 32 rows (sequences s0 + r) x K steps
// (t0 + t) of `Slots` planes of T values, row r of slot k at word (k * 32 + r) * kRowWords.
template <class T, int K, int Slots> struct SequenceTile {
    static constexpr int kRows = kSequentialTileSequences;
    static constexpr int kValuesPerWord = 4 / static_cast<int>(sizeof(T));
    static constexpr int kWordsPerRow = K / kValuesPerWord;
    static_assert(K % kValuesPerWord == 0 && kRows % kWordsPerRow == 0, "a copy covers whole rows");
    static constexpr int kRowWords = sequential_row_words(sizeof(T), K);
    static constexpr int kRowsPerCopy = kRows / kWordsPerRow; // rows of one warp-wide copy
    static constexpr int kWords = sequential_buffer_words(sizeof(T), K, Slots);

    std::uint32_t* words;

    // Tile i's buffer of a warp's kSequentialTileBuffers (tile i + 1 is copied into the other).
    static __device__ __forceinline__ SequenceTile buffer(std::uint32_t* all, std::int64_t i) {
        return {all + (i % kSequentialTileBuffers) * kWords};
    }

    __device__ __forceinline__ T* row(int slot, int r) const {
        return reinterpret_cast<T*>(words + (slot * kRows + r) * kRowWords);
    }
    __device__ __forceinline__ float get(int slot, int r, int t) const { return to_float(row(slot, r)[t]); }
    __device__ __forceinline__ void set(int slot, int r, int t, float value) const {
        row(slot, r)[t] = from_float<T>(value);
    }

    // Whether a tensor's rows can be copied as 4-byte words: every row starts at 4 bytes (16-bit values:
    // an even length and an aligned tensor); else the values go one by one.
    static __device__ __forceinline__ bool words_aligned(const T* tensor, std::int64_t length) {
        return sizeof(T) == 4 || (length % 2 == 0 && (reinterpret_cast<std::uintptr_t>(tensor) & 3) == 0);
    }

    // A lane's word in a copy: pass j covers rows [j, j + 1) * kRowsPerCopy; the lane's row in it and
    // its word in the row (values [word, word + 1) * kValuesPerWord of the tile's steps).
    static __device__ __forceinline__ int first_row(int lane) { return lane / kWordsPerRow; }
    static __device__ __forceinline__ int word_of(int lane) { return lane % kWordsPerRow; }
    __device__ __forceinline__ std::uint32_t* word_at(int slot, int r, int word) const {
        return words + (slot * kRows + r) * kRowWords + word;
    }

    // Starts copying rows [s0, s0 + 32) x steps [t0, t0 + K) of plane `plane` of `tensor` into `slot`;
    // values outside [0, sequences) x [0, length) read as zero. Every lane of the warp calls it; the
    // caller commits the copies (one commit per fill).
    __device__ __forceinline__ void copy_async(int slot, const T* tensor, const Rows& rows, int plane,
                                               std::int64_t s0, std::int64_t t0, bool aligned) const {
        const int lane = static_cast<int>(threadIdx.x) % 32, r = first_row(lane), word = word_of(lane);
        if (!aligned) {
            copy_values(slot, tensor, rows, plane, s0, t0);
            return;
        }
        const std::int64_t t = t0 + word * kValuesPerWord, s = s0 + r;
        const std::int64_t stride = kRowsPerCopy * rows.length; // between passes
        std::uint32_t* to = word_at(slot, r, word);
        if (inside(rows, s0, t0)) {
            // A whole tile (the warp's branch): one running address, no test per pass. (Each pass's
            // address computed from the row and tested took about 15 instructions of the warp's issue,
            // 50 per step of FlashGRU, for 4 bytes: the one warp of an SM issues them in turn with the
            // steps.)
            const T* from = tensor + rows.at(plane, s, t);
#pragma unroll 8
            for (int j = 0; j < kWordsPerRow; ++j, from += stride)
                __pipeline_memcpy_async(to + j * kRowsPerCopy * kRowWords, from, 4);
            return;
        }
        // An even length keeps a 16-bit word whole: t < length implies t + 1 < length.
        const T* from = tensor + rows.at(plane, min(s, rows.sequences - 1), min(t, rows.length - 1));
        // Not unrolled further: every pass's address held at once took 255 registers (the copies are
        // asynchronous, so a pass's few instructions do not wait).
#pragma unroll 4
        for (int j = 0; j < kWordsPerRow; ++j) {
            const bool inside = s + j * kRowsPerCopy < rows.sequences && t < rows.length;
            __pipeline_memcpy_async(to + j * kRowsPerCopy * kRowWords, inside ? from + j * stride : tensor, 4,
                                    inside ? 0 : 4);
        }
    }

    // Whether rows [s0, s0 + 32) x steps [t0, t0 + K) all lie inside the tensor (every tile but the last
    // of each row and those of the last warp of sequences).
    static __device__ __forceinline__ bool inside(const Rows& rows, std::int64_t s0, std::int64_t t0) {
        return s0 + kRows <= rows.sequences && t0 + K <= rows.length;
    }

    // copy_async's values one by one (16-bit rows that do not start at 4 bytes), synchronously.
    __device__ __noinline__ void copy_values(int slot, const T* tensor, const Rows& rows, int plane,
                                             std::int64_t s0, std::int64_t t0) const {
        const int lane = static_cast<int>(threadIdx.x) % 32, word = word_of(lane);
        const std::int64_t t = t0 + word * kValuesPerWord;
        for (int j = 0; j < kWordsPerRow; ++j) {
            const int r = first_row(lane) + j * kRowsPerCopy;
            const std::int64_t s = s0 + r;
            T values[kValuesPerWord];
#pragma unroll
            for (int v = 0; v < kValuesPerWord; ++v)
                values[v] = s < rows.sequences && t + v < rows.length ? tensor[rows.at(plane, s, t + v)]
                                                                      : from_float<T>(0.0f);
            *word_at(slot, r, word) = *reinterpret_cast<const std::uint32_t*>(values);
        }
    }

    // Writes `slot` to rows [s0, s0 + 32) x steps [t0, t0 + K) of plane `plane` of `tensor`, the values
    // inside [0, sequences) x [0, length). Every lane of the warp calls it, after __syncwarp.
    __device__ __forceinline__ void store(int slot, T* tensor, const Rows& rows, int plane, std::int64_t s0,
                                          std::int64_t t0, bool aligned) const {
        const int lane = static_cast<int>(threadIdx.x) % 32, r = first_row(lane), word = word_of(lane);
        if (!aligned) {
            store_values(slot, tensor, rows, plane, s0, t0);
            return;
        }
        const std::int64_t t = t0 + word * kValuesPerWord, s = s0 + r;
        const std::int64_t stride = kRowsPerCopy * rows.length;
        if (inside(rows, s0, t0)) { // as copy_async's
            T* into = tensor + rows.at(plane, s, t);
#pragma unroll 8
            for (int j = 0; j < kWordsPerRow; ++j, into += stride)
                *reinterpret_cast<std::uint32_t*>(into) = *word_at(slot, r + j * kRowsPerCopy, word);
            return;
        }
        if (t >= rows.length) return;
        T* into = tensor + rows.at(plane, min(s, rows.sequences - 1), t);
#pragma unroll 4
        for (int j = 0; j < kWordsPerRow; ++j)
            if (s + j * kRowsPerCopy < rows.sequences)
                *reinterpret_cast<std::uint32_t*>(into + j * stride) =
                    *word_at(slot, r + j * kRowsPerCopy, word);
    }

    // store's values one by one (16-bit rows that do not start at 4 bytes).
    __device__ __noinline__ void store_values(int slot, T* tensor, const Rows& rows, int plane,
                                              std::int64_t s0, std::int64_t t0) const {
        const int lane = static_cast<int>(threadIdx.x) % 32, word = word_of(lane);
        const std::int64_t t = t0 + word * kValuesPerWord;
        for (int j = 0; j < kWordsPerRow; ++j) {
            const int r = first_row(lane) + j * kRowsPerCopy;
            const std::int64_t s = s0 + r;
            if (s >= rows.sequences) continue;
            const std::uint32_t packed = *word_at(slot, r, word);
            const T* values = reinterpret_cast<const T*>(&packed);
#pragma unroll
            for (int v = 0; v < kValuesPerWord; ++v)
                if (t + v < rows.length) tensor[rows.at(plane, s, t + v)] = values[v];
        }
    }
};

// Waits for the fill before the last one (each fill commits one group, empty past the last tile).
__device__ __forceinline__ void wait_for_previous_tile() {
    __pipeline_wait_prior(1);
    __syncwarp();
}

// A block's warp of sequences [s0, s0 + 32): the thread's sequence s, whether it exists, and the tiles
// of K steps along the rows.
template <int K> struct WarpSequences {
    int lane;
    std::int64_t s0, s, tile_count;
    bool valid;
    __device__ __forceinline__ explicit WarpSequences(const Rows& rows)
        : lane(static_cast<int>(threadIdx.x)),
          s0(static_cast<std::int64_t>(blockIdx.x) * kSequentialTileSequences), s(s0 + lane),
          tile_count((rows.length + K - 1) / K), valid(s < rows.sequences) {}

    // The thread's N per-sequence values values[index(k)] (zero without a sequence or without values).
    template <int N, class Index>
    __device__ __forceinline__ void read(const float* values, Index index, float (&out)[N]) const {
#pragma unroll
        for (int k = 0; k < N; ++k)
            out[k] = valid && values ? values[index(k)] : 0.0f;
    }
};

// Steps [0, steps) of a tile in order (kReverse: from the last), a whole tile (steps = K) unrolled, so
// that its reads are issued ahead of the steps that wait on them.
template <int K, bool kReverse, class Step> __device__ __forceinline__ void tile_steps(int steps, Step step) {
    if (steps == K) {
#pragma unroll
        for (int i = 0; i < K; ++i)
            step(kReverse ? K - 1 - i : i);
    } else {
        for (int i = 0; i < steps; ++i)
            step(kReverse ? steps - 1 - i : i);
    }
}

// The forward: tiles in turn, the next one in flight; the states leave through the gates' slots (a
// step's gates are read before its states are written, each thread in its own row).
template <class C, class T>
__global__ void __launch_bounds__(kSequentialThreads)
    sequential_forward_kernel(const ForwardParams<T> p, float* statistics) {
    constexpr int S = C::num_states, G = C::num_gates, P = C::num_parameters,
                  K = sequential_tile_steps(false);
    static_assert(S <= G, "the states leave through the gates' slots");
    using Tile = SequenceTile<T, K, sequential_forward_slots(G)>;
    __shared__ std::uint32_t words[kSequentialTileBuffers * Tile::kWords];
    const auto tile_of = [&](std::int64_t i) { return Tile::buffer(words, i); };
    const WarpSequences<K> warp(p.rows);
    const int lane = warp.lane;
    const std::int64_t s0 = warp.s0, s = warp.s, length = p.rows.length, tile_count = warp.tile_count;
    const bool inputs_aligned = Tile::words_aligned(p.inputs, length);
    const bool states_aligned = Tile::words_aligned(p.states, length);
    const auto fill = [&](std::int64_t i) {
        if (i < tile_count)
#pragma unroll
            for (int g = 0; g < G; ++g)
                tile_of(i).copy_async(g, p.inputs, p.rows, g, s0, i * K, inputs_aligned);
        __pipeline_commit();
    };
    fill(0);
    fill(1);
    float parameters[P], state[S];
    warp.read(
        p.parameters, [&](int k) { return p.rows.parameter_at(k, s); }, parameters);
    warp.read(
        p.initial_state, [&](int k) { return p.rows.state_at(k, s); }, state);
    for (std::int64_t i = 0; i < tile_count; ++i) {
        wait_for_previous_tile();
        const Tile tile = tile_of(i);
        const int steps = static_cast<int>(min(static_cast<std::int64_t>(K), length - i * K));
        const auto step = [&](int t) {
            float x[G], next[S];
#pragma unroll
            for (int g = 0; g < G; ++g)
                x[g] = tile.get(g, lane, t);
            cell_forward<C, kSequentialActivations>(x, parameters, state, next);
#pragma unroll
            for (int k = 0; k < S; ++k) {
                state[k] = next[k];
                tile.set(k, lane, t, next[k]);
            }
        };
        tile_steps<K, false>(steps, step);
        __syncwarp();
#pragma unroll
        for (int k = 0; k < S; ++k)
            tile.store(k, p.states, p.rows, k, s0, i * K, states_aligned);
        __syncwarp(); // every lane has read the slots before the next fill overwrites them
        fill(i + 2);
    }
    __pipeline_wait_prior(0);
    if (!warp.valid) return;
    bool finite = true;
#pragma unroll
    for (int k = 0; k < S; ++k) {
        finite = finite && isfinite(state[k]);
        if (p.last_state) p.last_state[p.rows.state_at(k, s)] = state[k];
    }
    if (!finite && statistics) statistics[3] = 1.0f; // every writer writes the same value
}

// The backward, from the last tile and step: g_t = d_t + J_{t+1}^T g_{t+1} through the cell's
// backward. Slots: the gates (their gradients leave through them), the states, the states' gradients.
template <class C, class T>
__global__ void __launch_bounds__(kSequentialThreads) sequential_backward_kernel(const BackwardParams<T> p) {
    constexpr int S = C::num_states, G = C::num_gates, P = C::num_parameters, K = sequential_tile_steps(true);
    constexpr int kStates = G, kDStates = G + S;
    using Tile = SequenceTile<T, K, sequential_backward_slots(G, S)>;
    __shared__ std::uint32_t words[kSequentialTileBuffers * Tile::kWords];
    const auto tile_of = [&](std::int64_t i) { return Tile::buffer(words, i); };
    const WarpSequences<K> warp(p.rows);
    const int lane = warp.lane;
    const std::int64_t s0 = warp.s0, s = warp.s, length = p.rows.length, tile_count = warp.tile_count;
    const bool valid = warp.valid;
    const bool inputs_aligned = Tile::words_aligned(p.inputs, length);
    const bool states_aligned = Tile::words_aligned(p.states, length);
    const bool d_states_aligned = p.d_states && Tile::words_aligned(p.d_states, length);
    const bool d_inputs_aligned = Tile::words_aligned(p.d_inputs, length);
    const auto first_step = [&](std::int64_t i) { return (tile_count - 1 - i) * K; }; // tile i from the end
    const auto fill = [&](std::int64_t i) {
        if (i < tile_count) {
            const Tile tile = tile_of(i);
            const std::int64_t t0 = first_step(i);
#pragma unroll
            for (int g = 0; g < G; ++g)
                tile.copy_async(g, p.inputs, p.rows, g, s0, t0, inputs_aligned);
#pragma unroll
            for (int k = 0; k < S; ++k) {
                tile.copy_async(kStates + k, p.states, p.rows, k, s0, t0, states_aligned);
                if (p.d_states)
                    tile.copy_async(kDStates + k, p.d_states, p.rows, k, s0, t0, d_states_aligned);
            }
        }
        __pipeline_commit();
    };
    fill(0);
    fill(1);
    float parameters[P], carry[S], d_p_sum[P] = {};
    warp.read(
        p.parameters, [&](int k) { return p.rows.parameter_at(k, s); }, parameters);
    warp.read(
        p.d_last_state, [&](int k) { return p.rows.state_at(k, s); }, carry);
    for (std::int64_t i = 0; i < tile_count; ++i) {
        const std::int64_t t0 = first_step(i);
        // The state before the tile's first step (needed last): from the tile before, or h0.
        float before[S];
#pragma unroll
        for (int k = 0; k < S; ++k)
            before[k] = !valid            ? 0.0f
                        : t0 > 0          ? to_float(p.states[p.rows.at(k, s, t0 - 1)])
                        : p.initial_state ? p.initial_state[p.rows.state_at(k, s)]
                                          : 0.0f;
        wait_for_previous_tile();
        const Tile tile = tile_of(i);
        const int steps = static_cast<int>(min(static_cast<std::int64_t>(K), length - t0));
        // A step's gates depend on the states, not on the carry: a whole tile unrolled lets the steps'
        // activations overlap, leaving the carry's few products as the chain.
        const auto step = [&](int t) {
            float x[G], previous[S], g[S], d_x[G], d_p[P], d_previous[S];
#pragma unroll
            for (int q = 0; q < G; ++q)
                x[q] = tile.get(q, lane, t);
#pragma unroll
            for (int k = 0; k < S; ++k) {
                previous[k] = t > 0 ? tile.get(kStates + k, lane, t - 1) : before[k];
                g[k] = carry[k] + (p.d_states ? tile.get(kDStates + k, lane, t) : 0.0f);
            }
            cell_backward<C, kSequentialActivations>(x, parameters, previous, g, d_x, d_p, d_previous);
#pragma unroll
            for (int q = 0; q < G; ++q)
                tile.set(q, lane, t, d_x[q]);
#pragma unroll
            for (int k = 0; k < P; ++k)
                d_p_sum[k] += d_p[k];
#pragma unroll
            for (int k = 0; k < S; ++k)
                carry[k] = d_previous[k];
        };
        tile_steps<K, true>(steps, step);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < G; ++q)
            tile.store(q, p.d_inputs, p.rows, q, s0, t0, d_inputs_aligned);
        __syncwarp(); // every lane has read the slots before the next fill overwrites them
        fill(i + 2);
    }
    __pipeline_wait_prior(0);
    if (!valid) return;
#pragma unroll
    for (int k = 0; k < P; ++k)
        atomicAdd(p.d_parameters + p.rows.parameter_at(k, s), d_p_sum[k]);
    if (p.d_initial_state)
#pragma unroll
        for (int k = 0; k < S; ++k)
            p.d_initial_state[p.rows.state_at(k, s)] = carry[k];
}

} // namespace flashrnn::cuda::newton

// The fused Newton forward (Backend::fused; paper App. D.2/D.3 "fully fused"): one kernel runs the whole
// Newton routine of a sequence with its tile on chip. A block takes one sequence at a time and walks
// it tile by tile (kThreads x E steps, E consecutive steps per thread); per tile it reads the inputs
// once (copied into shared memory while the tile before is solved: input_staging.cuh), makes the
// initial guess (eq. 10), then per iteration evaluates residuals and Jacobians (the
// cell header's step, with the cheap hardware tanh in the guess and all iterations but the last, exp
// and a reciprocal in the last for fp32 states, the hardware tanh in every iteration for 16-bit
// states, which are rounded to more than its error: activation_float.cuh) and solves the tile's linear
// recurrence with the scan core's block_scan (linearised around the iterate, so that the scan gives the next
// iterate: the iterate is not held across it); it writes the states once. The state entering a tile is the
// previous tile's solution (the initial state for the first), held fixed: a sequence longer than one tile is
// solved by Newton tile after tile ("segmented Newton"), which equals the unfused global Newton of
// Backend::newton when the sequence fits one tile and otherwise converges to the same sequential solution
// (each tile starts from a state that is already converged up to the previous tile's residual). With a
// tolerance (kTolerance) every evaluation is the accurate one (a cheap one could not tell a residual of 1e-5
// from 0), and a tile stops once its largest residual meets the tolerance against its largest state (or is
// not finite), at most after p.iterations updates: the block's verdict, so a tile that converges early costs
// no more iterations, whatever the other blocks do. No grid level, no workspace, no host synchronisation:
// capturable in a graph.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/newton/cell_with_activations.cuh"
#include "cuda/newton/input_staging.cuh"
#include "cuda/newton/rows.cuh"
#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/block_scan.cuh"
#include "cuda/scan/chunk_io.cuh"
#include "cuda/scan/reduction_clients.cuh"
#include "cuda/scan/warp_scan_from.cuh"

namespace flashrnn::cuda::newton {

template <class T> struct FusedParams {
    const T* inputs;
    const float* parameters;
    const float* initial_state; // may be null (zero)
    T* states;
    float* last_state;  // may be null
    Counters* counters; // null: no statistics asked for (without a tolerance: no final evaluation)
    Rows rows;
    int iterations;           // per tile: exactly these without a tolerance, at most these with one
    float absolute, relative; // the tolerance (kTolerance)
};

// The scan element of a cell's linearised step: scalar for one state, 2x2 blocks for two.
template <class C>
using FusedMap = std::conditional_t<C::num_states == 1, scan::ScalarAffine, scan::Affine2x2>;

// Blocks per SM the compiler must fit (registers capped to match). One-warp blocks are latency-bound:
// more of them on an SM hide it. With 8 fp32 steps per thread the compiler's own choice is 111 registers
// for FlashGRU and 143 for FlashLSTM. Without a tolerance they are capped at 64 (32 blocks, the most an
// SM takes; the input staging's shared memory fits 29 for fp32, 25 for bf16, whose inputs are widened to
// fp32) and 96 (21 fit): no spills (ptxas -v), at most 2% more
// instructions than at the former 80 and 128 (SASS), and 5% faster on the H100 (FlashGRU bf16, FlashLSTM
// fp32; FlashGRU fp32 is memory-bound: unchanged; docs/benchmarks.md). FlashLSTM at 80 registers (24
// blocks) spills 52 bytes in its last iteration and ran slower. With a tolerance (more live values;
// they spill already) 80 and 128 (24 and 16 blocks).
template <class C, int kThreads, bool kTolerance>
inline constexpr int kFusedMinBlocks = kThreads != scan::kWarpSize ? 1
                                       : C::num_states == 1        ? (kTolerance ? 24 : 32)
                                                                   : (kTolerance ? 16 : 20);

// The dynamic shared memory of a block: its warps' input staging.
template <class C, class T, int E, int kThreads>
inline constexpr int
    kFusedInputBytes = (kThreads / scan::kWarpSize) * InputStaging<T, E, C::num_gates>::kBytesPerWarp;

template <class C, class T, int E, int kThreads, ScanAccess A, bool kTolerance>
__global__ void __launch_bounds__(kThreads, (kFusedMinBlocks<C, kThreads, kTolerance>))
    fused_forward_kernel(const FusedParams<T> p) {
    constexpr int S = C::num_states, G = C::num_gates, P = C::num_parameters;
    constexpr int kWarps = kThreads / scan::kWarpSize;
    constexpr std::int64_t kTile = static_cast<std::int64_t>(kThreads) * E;
    using Map = FusedMap<C>;
    using Element = scan::ReductionElement<Map>;
    __shared__ scan::BlockScanStorage<Map, kThreads> scan_storage;
    __shared__ scan::StagingStorage<scan::kStaged<T, E, A>, E, kThreads> staging_storage;
    __shared__ float warp_last[kWarps][S]; // the iterate at each warp's last step
    __shared__ float tile_last[2][S];      // the solution at a tile's last step, by tile parity
    __shared__ float warp_maxima[kTolerance && kWarps > 1 ? kWarps : 1][2]; // |residual|, |state|
    extern __shared__ uint4 input_words[]; // kFusedInputBytes<C, T, E, kThreads>

    const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
    // A constant 0 in one-warp blocks: a tile's span is then uniform, no per-thread arithmetic.
    const int warp = kWarps == 1 ? 0 : static_cast<int>(threadIdx.x) / scan::kWarpSize;
    float* staging = staging_storage.warp_words(warp);
    const std::int64_t length = p.rows.length;
    const std::int64_t plane = p.rows.sequences * length;
    const std::int64_t tiles = (length + kTile - 1) / kTile;
    int buffer = 0;
    using Inputs = InputStaging<T, E, G>;
    const Inputs inputs{reinterpret_cast<std::uint32_t*>(input_words) + warp * (Inputs::kBytesPerWarp / 4)};
    const auto copy_inputs = [&](std::int64_t s, std::int64_t tile, int into) {
        inputs.copy_async(p.inputs + s * length, plane, tile * kTile + warp * scan::kWarpSize * E, length,
                          into);
    };
    int input_buffer = 0; // the buffer of this tile's inputs
    copy_inputs(blockIdx.x, 0, input_buffer);
    // Whether every row of the inputs and of the states starts at 16 bytes (then so does every tile of
    // it): a whole tile then moves as 16-byte packets, decided with one test per tile.
    const std::int64_t whole_tiles = length / kTile;
    const bool input_packets = Inputs::kPacketsPerLane > 0 && Inputs::packets_aligned(p.inputs, length, 0);
    const bool state_packets = Inputs::packets_aligned(p.states, length, 0);

    for (std::int64_t s = blockIdx.x; s < p.rows.sequences; s += gridDim.x) {
        float params[P], carry[S];
#pragma unroll
        for (int k = 0; k < P; ++k)
            params[k] = p.parameters[p.rows.parameter_at(k, s)];
#pragma unroll
        for (int k = 0; k < S; ++k)
            carry[k] = p.initial_state ? p.initial_state[p.rows.state_at(k, s)] : 0.0f;
        const std::int64_t row = s * length;

        for (std::int64_t tile = 0; tile < tiles; ++tile) {
            const std::int64_t start = tile * kTile + threadIdx.x * E;
            // The next tile's inputs (this sequence's, or the block's next sequence's first) are copied
            // while this one is solved, into the other buffer, which every lane has finished reading.
            __syncwarp();
            const std::int64_t next_sequence = tile + 1 < tiles ? s : s + gridDim.x;
            if (tile + 1 < whole_tiles && input_packets) {
                if constexpr (Inputs::kPacketsPerLane > 0)
                    inputs.copy_packets(p.inputs + row + (tile + 1) * kTile + warp * scan::kWarpSize * E,
                                        plane, input_buffer ^ 1);
            } else if (next_sequence < p.rows.sequences)
                copy_inputs(next_sequence, tile + 1 < tiles ? tile + 1 : 0, input_buffer ^ 1);
            else
                __pipeline_commit(); // nothing to copy: an empty fill, so that this tile's is the previous
            Inputs::wait_for_previous_fill();
            // Each evaluation reads the inputs again from shared memory: no registers held across the scans
            // (16-bit inputs as the fp32 values the guess widened them to).
            const auto read_inputs = [&](float(&x)[G][E]) {
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    if constexpr (Inputs::kWidened)
                        inputs.read_widened(g, x[g]);
                    else
                        inputs.read(input_buffer, g, x[g]);
                }
            };
            // The state before step e of this thread's chunk, from the iterate h: the thread's own
            // step before, the lane before's last, the warp before's last (shared), or the carry.
            float h[S][E];
            const auto step_inputs = [&](const float(&x)[G][E], int e, float(&xe)[G]) {
#pragma unroll
                for (int g = 0; g < G; ++g)
                    xe[g] = x[g][e];
            };
            const auto state_before_chunk = [&](float(&before)[S]) {
                if constexpr (kWarps > 1) {
                    if (lane == scan::kWarpSize - 1)
#pragma unroll
                        for (int k = 0; k < S; ++k)
                            warp_last[warp][k] = h[k][E - 1];
                    __syncthreads();
                }
#pragma unroll
                for (int k = 0; k < S; ++k) {
                    before[k] = __shfl_up_sync(kFullWarp, h[k][E - 1], 1);
                    if (lane == 0) before[k] = kWarps > 1 && warp > 0 ? warp_last[warp - 1][k] : carry[k];
                }
            };

            // Eq. 10: h_t = f(0, x_t), except the tile's first step, which starts from the carry (a
            // thread's first step is evaluated from a state, its others from zero without its terms).
            {
                // (With a tolerance the accurate activations: T = 1 is then solved by the guess alone.)
                constexpr Activations kGuess =
                    kTolerance ? Activations::exp_reciprocal : Activations::hardware_tanh;
                float x[G][E];
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    inputs.read(input_buffer, g, x[g]);
                    if constexpr (Inputs::kWidened) inputs.widen(g, x[g]);
                }
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    float xe[G], next[S];
                    step_inputs(x, e, xe);
                    if (e == 0) {
                        float previous[S];
#pragma unroll
                        for (int k = 0; k < S; ++k)
                            previous[k] = threadIdx.x == 0 ? carry[k] : 0.0f;
                        cell_forward<C, kGuess>(xe, params, previous, next);
                    } else {
                        cell_forward_from_zero<C, kGuess>(xe, params, next);
                    }
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        h[k][e] = next[k];
                }
            }

            // The Jacobians at the iterate with the activations kActivations and the step linearised around
            // it, h'_t = J_t h'_{t-1} + (f(h_{t-1}, x_t) - J_t h_{t-1}), as the scan's elements: solved from
            // the state entering the tile, it gives the next iterate, h plus the Newton update (which solves
            // delta_t = J_t delta_{t-1} + r_t from 0, r_t = f(h_{t-1}, x_t) - h_t), without the iterate
            // held in registers across the scan. With a tolerance also this thread's largest |residual|
            // (infinity where one is not finite) and |state| over its steps within the sequence.
            const auto evaluate = [&]<Activations kActivations>(Map(&maps)[E], float& residual_max,
                                                                float& state_max) {
                float before[S], x[G][E];
                state_before_chunk(before);
                read_inputs(x);
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    float xe[G], previous[S], next[S], jacobian[S * S], offset[S];
                    step_inputs(x, e, xe);
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        previous[k] = e == 0 ? before[k] : h[k][e - 1];
                    cell_step<C, kActivations>(xe, params, previous, next, jacobian);
#pragma unroll
                    for (int k = 0; k < S; ++k) {
                        offset[k] = next[k];
#pragma unroll
                        for (int j = 0; j < S; ++j)
                            offset[k] = fmaf(-jacobian[k * S + j], previous[j], offset[k]);
                        if (kWarps == 1 && threadIdx.x == 0 && e == 0) offset[k] = next[k];
                        if (kTolerance && start + e < length) {
                            const float residual = next[k] - h[k][e];
                            residual_max =
                                isfinite(residual) ? fmaxf(residual_max, fabsf(residual)) : INFINITY;
                            state_max = fmaxf(state_max, fabsf(h[k][e]));
                        }
                    }
                    // One warp: the thread's inclusive prefixes (warp_scan_from), composed here, where the
                    // step's value and point are at hand (then_about: no offset formed), and the tile's
                    // first step applied to the entering state (previous is the carry): the constant map
                    // to its value.
                    if constexpr (kWarps == 1) {
                        if (e == 0) {
                            if (threadIdx.x == 0)
#pragma unroll
                                for (int j = 0; j < S * S; ++j)
                                    jacobian[j] = 0.0f;
                            maps[0] = Element::map(jacobian, offset);
                        } else {
                            maps[e] = Element::then_about(maps[e - 1], jacobian, previous, next);
                        }
                    } else {
                        maps[e] = Element::map(jacobian, offset);
                    }
                }
            };
            // The next iterate: the linearised steps solved from the state entering the tile.
            const auto update = [&](Map(&maps)[E]) {
                typename Map::State iterate[E];
                // One warp knows the state entering its tile before the scan: the cheaper warp scan (from
                // the prefixes that evaluate composed, lane 0's from the carry).
                if constexpr (kWarps == 1) {
                    scan::warp_scan_from<E>(maps, iterate);
                } else {
                    typename Map::State entering;
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        Element::set(entering, k, carry[k]);
                    scan::block_scan<E, kThreads>(maps, entering, false, scan_storage, buffer, iterate);
                    buffer ^= 1;
                }
#pragma unroll
                for (int e = 0; e < E; ++e)
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        h[k][e] = Element::get(iterate[e], k);
            };
            const auto iterate = [&]<Activations kActivations>() {
                Map maps[E];
                float unused_residual = 0.0f, unused_state = 0.0f;
                evaluate.template operator()<kActivations>(maps, unused_residual, unused_state);
                update(maps);
            };
            // The block's largest |residual| and |state|, in every thread (the same order of maxima in
            // each, so that every thread takes the same branch). The next write of warp_maxima follows
            // the barrier of the next evaluation's state_before_chunk.
            const auto block_max = [&](float& residual_max, float& state_max) {
#pragma unroll
                for (int delta = scan::kWarpSize / 2; delta > 0; delta /= 2) {
                    residual_max = fmaxf(residual_max, __shfl_xor_sync(kFullWarp, residual_max, delta));
                    state_max = fmaxf(state_max, __shfl_xor_sync(kFullWarp, state_max, delta));
                }
                if constexpr (kWarps > 1) {
                    if (lane == 0) warp_maxima[warp][0] = residual_max, warp_maxima[warp][1] = state_max;
                    __syncthreads();
#pragma unroll
                    for (int w = 0; w < kWarps; ++w) {
                        residual_max = fmaxf(residual_max, warp_maxima[w][0]);
                        state_max = fmaxf(state_max, warp_maxima[w][1]);
                    }
                }
            };

            if constexpr (kTolerance) {
                // Evaluate, stop when the tile meets the tolerance (or its residual is not finite, or after
                // p.iterations updates), else update: the iterations done are the updates before the stop,
                // as the unfused solver counts them, and the residual is that of the returned states.
                for (int iteration = 0;; ++iteration) {
                    Map maps[E];
                    float residual_max = 0.0f, state_max = 0.0f;
                    evaluate.template operator()<Activations::exp_reciprocal>(maps, residual_max, state_max);
                    block_max(residual_max, state_max);
                    const bool finite = isfinite(residual_max);
                    const bool met = finite && residual_max <= p.absolute + p.relative * state_max;
                    if (met || !finite || iteration == p.iterations) {
                        if (p.counters && threadIdx.x == 0) {
                            atomicMax(&p.counters->most_iterations, static_cast<unsigned>(iteration));
                            atomicMax(&p.counters->max_residual_bits,
                                      __float_as_uint(finite ? residual_max : 0.0f));
                            if (!met) atomicOr(&p.counters->unmet, 1u);
                            if (!finite) atomicOr(&p.counters->non_finite, 1u);
                        }
                        break;
                    }
                    update(maps);
                }
            } else {
                // The early iterations only have to come close: the cheap activations. The last one
                // decides the result (p.iterations >= 1, checked by the host): the accurate activations
                // for fp32 states; 16-bit states are rounded to 2^-8 of their value, which the hardware
                // tanh's 2^-11 stays below, so they keep the cheap ones (half the special-function work).
                constexpr Activations kLast =
                    sizeof(T) == 4 ? Activations::exp_reciprocal : Activations::hardware_tanh;
                for (int iteration = 1; iteration < p.iterations; ++iteration)
                    iterate.template operator()<Activations::hardware_tanh>();
                iterate.template operator()<kLast>();
            }

            // The statistics' final evaluation: the residual of the returned states (with a tolerance,
            // the last evaluation's).
            if (!kTolerance && p.counters) {
                float before[S], x[G][E];
                state_before_chunk(before);
                read_inputs(x);
                float residual_max = 0.0f;
                bool finite = true;
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    float xe[G], previous[S], next[S];
                    step_inputs(x, e, xe);
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        previous[k] = e == 0 ? before[k] : h[k][e - 1];
                    cell_forward<C, Activations::exp_reciprocal>(xe, params, previous, next);
                    if (start + e < length)
#pragma unroll
                        for (int k = 0; k < S; ++k) {
                            const float r = next[k] - h[k][e];
                            finite = finite && isfinite(r);
                            residual_max = fmaxf(residual_max, fabsf(r));
                        }
                }
                if (__any_sync(kFullWarp, !finite) && lane == 0) atomicOr(&p.counters->non_finite, 1u);
                atomic_max_by_key(&p.counters->max_residual_bits, 0,
                                  __float_as_uint(finite ? residual_max : 0.0f), true);
            }

            // fp32 states of a whole tile of one warp leave as each thread's E consecutive values, 16-byte
            // stores from registers (each writes half of 32-byte sectors whose other half the next one
            // writes: the same DRAM bytes as a transposition through shared memory, a fifth of its
            // instructions: faster at many sequences on the H100; tiles of many warps, which serve few long
            // sequences and wait on latency, ran 5% slower with them: docs/benchmarks.md); other tiles
            // through this tile's input buffer (read for the last time), whose next copy follows the
            // __syncwarp at the loop's top. 16-bit states through the warp's staging.
            static_assert(S <= G, "a state per gate slot");
            if constexpr (sizeof(T) == 4) {
                if (kWarps == 1 && tile < whole_tiles && state_packets) {
                    float* into = p.states + row + start;
#pragma unroll
                    for (int k = 0; k < S; ++k)
#pragma unroll
                        for (int j = 0; j < E; j += 4)
                            *reinterpret_cast<float4*>(into + k * plane + j) =
                                make_float4(h[k][j], h[k][j + 1], h[k][j + 2], h[k][j + 3]);
                } else {
                    inputs.store(input_buffer, p.states + row, plane,
                                 tile * kTile + warp * scan::kWarpSize * E, length, h);
                }
            } else {
#pragma unroll
                for (int k = 0; k < S; ++k)
                    scan::store_chunk<T, E, A>(p.states + k * plane + row, start, length, h[k], staging);
            }
            // The sequence's last state, in its last tile (tested first: the block's branch, not per thread).
            if (tile + 1 == tiles) {
                if (p.last_state && start <= length - 1 && length - 1 < start + E)
#pragma unroll
                    for (int e = 0; e < E; ++e)
                        if (start + e == length - 1)
#pragma unroll
                            for (int k = 0; k < S; ++k)
                                p.last_state[p.rows.state_at(k, s)] = h[k][e];
            } else if constexpr (kWarps == 1) {
                // The next tile starts from this one's last state (a full tile: the block's last thread).
#pragma unroll
                for (int k = 0; k < S; ++k)
                    carry[k] = __shfl_sync(kFullWarp, h[k][E - 1], scan::kWarpSize - 1);
            } else {
                if (threadIdx.x == kThreads - 1)
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        tile_last[tile & 1][k] = h[k][E - 1];
                __syncthreads();
#pragma unroll
                for (int k = 0; k < S; ++k)
                    carry[k] = tile_last[tile & 1][k];
            }
            input_buffer ^= 1;
        }
        // The next sequence's first tile must not overwrite warp_last before every warp has read it.
        __syncthreads();
    }
}

} // namespace flashrnn::cuda::newton

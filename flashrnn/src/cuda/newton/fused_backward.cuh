// The fused Newton backward (Backend::fused; eq. 6 of the paper): one kernel, shaped like the fused
// forward (fused.cuh). A block takes one sequence at a time and walks it tile by tile from the end
// (kThreads x E steps, E consecutive steps per thread); per tile it reads the inputs, the states and
// their gradients once, and writes the inputs' gradients once. No Jacobian, right-hand side or carry
// goes through memory: the unfused backward (kernels.cuh, reduce.cu) moves about 20 values per step
// against this kernel's 8 (FlashGRU).
//
// The reverse reduction is run on u_t = J_t^T g_t, whose map uses step t's own Jacobian (from x_t and
// h_{t-1}, both in the tile): u_t = J_t^T u_{t+1} + J_t^T d_t, and g_t = d_t + u_{t+1} (the neighbour's
// u, one shuffle). u entering a tile from the later one is that tile's scan total (held in registers,
// stream-ordered: no grid level, no workspace, no host synchronisation); u_0 is the initial state's
// gradient. The parameters' gradients are summed per thread over the whole sequence, over the block
// at its end, and added with one atomic per parameter and sequence.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/common/elements.cuh"
#include "cuda/newton/rows.cuh"
#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/block_scan.cuh"
#include "cuda/scan/chunk_io.cuh"
#include "cuda/scan/reduction_clients.cuh"

namespace flashrnn::cuda::newton {

template <class T> struct FusedBackwardParams {
    const T* inputs;
    const float* parameters;
    const float* initial_state; // may be null (zero)
    const T* states;
    const T* d_states;         // may be null (zero)
    const float* d_last_state; // may be null (zero)
    T* d_inputs;
    float* d_parameters;    // zeroed by the caller, accumulated
    float* d_initial_state; // may be null
    Rows rows;
};

// The scan element of the transposed linearised step: scalar for one state, 2x2 blocks for two.
template <class C>
using FusedBackwardMap = std::conditional_t<C::num_states == 1, scan::ScalarAffine, scan::Affine2x2>;

// Blocks per SM the compiler must fit (registers capped to match): the kernel streams its tensors once,
// with a tile's loads in flight together, so that more resident warps hide more of the latency. With
// 4 steps per thread: FlashGRU 32 warps per SM (64 registers; ptxas sm_90: fp32 spills 32-44 bytes,
// bf16 none; uncapped 85-86 registers, 20 warps, were 13-28% slower in bf16 on the H100), FlashLSTM 16
// (128 registers; uncapped the compiler took 136-161, 8-12 warps, and 4 x 256 ran 1.7x slower than at
// 114 registers). 8 steps per thread (twice the values) are left to the compiler.
template <class C, int E, int kThreads>
inline constexpr int kFusedBackwardMinBlocks = E == 4 ? std::max(1, (C::num_states == 1 ? 32 : 16) *
                                                                        scan::kWarpSize / kThreads)
                                                      : 1;

template <class C, class T, int E, int kThreads, ScanAccess A>
__global__ void __launch_bounds__(kThreads, (kFusedBackwardMinBlocks<C, E, kThreads>))
    fused_backward_kernel(const FusedBackwardParams<T> p) {
    constexpr int S = C::num_states, G = C::num_gates, P = C::num_parameters;
    constexpr int kWarps = kThreads / scan::kWarpSize;
    constexpr std::int64_t kTile = static_cast<std::int64_t>(kThreads) * E;
    using Map = FusedBackwardMap<C>;
    using Element = scan::ReductionElement<Map>;
    __shared__ scan::BlockScanStorage<Map, kThreads> scan_storage;
    __shared__ scan::StagingStorage<scan::kStaged<T, E, A>, E, kThreads> staging_storage;
    __shared__ float warp_last_state[kWarps][S]; // h at each warp's last step
    __shared__ float warp_first_u[kWarps][S];    // u at each warp's first step
    __shared__ float block_sums[kWarps][P];      // the parameters' gradients, per warp

    const int lane = static_cast<int>(threadIdx.x) % scan::kWarpSize;
    const int warp = static_cast<int>(threadIdx.x) / scan::kWarpSize;
    float* staging = staging_storage.warp_words(warp);
    const std::int64_t length = p.rows.length;
    const std::int64_t plane = p.rows.sequences * length;
    const std::int64_t tiles = (length + kTile - 1) / kTile;
    int buffer = 0;

    for (std::int64_t s = blockIdx.x; s < p.rows.sequences; s += gridDim.x) {
        const std::int64_t row = s * length;
        float params[P], d_params[P] = {};
        typename Map::State carry{}; // u entering the tile from the later one
#pragma unroll
        for (int k = 0; k < P; ++k)
            params[k] = p.parameters[p.rows.parameter_at(k, s)];

        for (std::int64_t tile = tiles - 1; tile >= 0; --tile) {
            const std::int64_t start = tile * kTile + threadIdx.x * E;
            // Every tensor's loads are issued before the first is unpacked (zero past the end), so that
            // they are in flight together.
            scan::Chunk<T, E, A> x_chunks[G], h_chunks[S], d_chunks[S];
#pragma unroll
            for (int g = 0; g < G; ++g)
                x_chunks[g].fetch(p.inputs + g * plane + row, start, length, from_float<T>(0.0f));
#pragma unroll
            for (int k = 0; k < S; ++k) {
                h_chunks[k].fetch(p.states + k * plane + row, start, length, from_float<T>(0.0f));
                if (p.d_states)
                    d_chunks[k].fetch(p.d_states + k * plane + row, start, length, from_float<T>(0.0f));
            }
            float x[G][E], h[S][E], d[S][E];
#pragma unroll
            for (int g = 0; g < G; ++g)
                x_chunks[g].unpack(x[g], staging);
#pragma unroll
            for (int k = 0; k < S; ++k) {
                h_chunks[k].unpack(h[k], staging);
                if (p.d_states)
                    d_chunks[k].unpack(d[k], staging);
                else
#pragma unroll
                    for (int e = 0; e < E; ++e)
                        d[k][e] = 0.0f;
            }
            if (p.d_last_state && start <= length - 1 && length - 1 < start + E)
#pragma unroll
                for (int e = 0; e < E; ++e)
                    if (start + e == length - 1)
#pragma unroll
                        for (int k = 0; k < S; ++k)
                            d[k][e] += p.d_last_state[p.rows.state_at(k, s)];

            // The state before this thread's first step: the lane before's last, the warp before's last
            // (shared), or (the tile's first step) the state before the tile, from memory.
            float before[S];
            if constexpr (kWarps > 1) {
                if (lane == scan::kWarpSize - 1)
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        warp_last_state[warp][k] = h[k][E - 1];
                __syncthreads();
            }
#pragma unroll
            for (int k = 0; k < S; ++k) {
                before[k] = __shfl_up_sync(kFullWarp, h[k][E - 1], 1);
                if (lane == 0 && warp > 0) before[k] = warp_last_state[warp - 1][k];
                if (threadIdx.x == 0)
                    before[k] = start > 0         ? to_float(p.states[k * plane + row + start - 1])
                                : p.initial_state ? p.initial_state[p.rows.state_at(k, s)]
                                                  : 0.0f;
            }
            const auto previous_of = [&](int e, float(&previous)[S]) {
#pragma unroll
                for (int k = 0; k < S; ++k)
                    previous[k] = e == 0 ? before[k] : h[k][e - 1];
            };
            const auto step_inputs = [&](int e, float(&xe)[G]) {
#pragma unroll
                for (int g = 0; g < G; ++g)
                    xe[g] = x[g][e];
            };

            // u_t = J_t^T u_{t+1} + J_t^T d_t; the identity past the sequence's end.
            Map maps[E];
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (start + e >= length) {
                    maps[e] = Map::identity();
                    continue;
                }
                float xe[G], previous[S], unused[S], jacobian[S * S], transposed[S * S], rhs[S];
                step_inputs(e, xe);
                previous_of(e, previous);
                C::step(xe, params, previous, unused, jacobian);
#pragma unroll
                for (int a = 0; a < S; ++a) {
                    rhs[a] = 0.0f;
#pragma unroll
                    for (int b = 0; b < S; ++b) {
                        transposed[a * S + b] = jacobian[b * S + a];
                        rhs[a] = fmaf(jacobian[b * S + a], d[b][e], rhs[a]);
                    }
                }
                maps[e] = Element::map(transposed, rhs);
            }
            typename Map::State u[E];
            const typename Map::State tile_total =
                scan::block_scan<E, kThreads>(maps, carry, true, scan_storage, buffer, u);
            buffer ^= 1;

            // u_{t+1} after this thread's last step: the lane after's first, the warp after's first
            // (shared), or (the tile's last step) the carry.
            float after[S];
            if constexpr (kWarps > 1) {
                if (lane == 0)
#pragma unroll
                    for (int k = 0; k < S; ++k)
                        warp_first_u[warp][k] = Element::get(u[0], k);
                __syncthreads();
            }
#pragma unroll
            for (int k = 0; k < S; ++k) {
                after[k] = __shfl_down_sync(kFullWarp, Element::get(u[0], k), 1);
                if (lane == scan::kWarpSize - 1 && warp + 1 < kWarps) after[k] = warp_first_u[warp + 1][k];
                if (threadIdx.x == kThreads - 1) after[k] = Element::get(carry, k);
            }

            // The cell's gradients at g_t = d_t + u_{t+1}.
            float d_x[G][E];
#pragma unroll
            for (int e = 0; e < E; ++e) {
                float xe[G], previous[S], g[S], d_xe[G], d_p[P], d_previous[S];
                step_inputs(e, xe);
                previous_of(e, previous);
#pragma unroll
                for (int k = 0; k < S; ++k)
                    g[k] = d[k][e] + (e + 1 < E ? Element::get(u[e + 1], k) : after[k]);
                C::backward(xe, params, previous, g, d_xe, d_p, d_previous);
                const bool valid = start + e < length;
#pragma unroll
                for (int gate = 0; gate < G; ++gate)
                    d_x[gate][e] = d_xe[gate];
#pragma unroll
                for (int k = 0; k < P; ++k)
                    d_params[k] += valid ? d_p[k] : 0.0f;
            }
#pragma unroll
            for (int gate = 0; gate < G; ++gate)
                scan::store_chunk<T, E, A>(p.d_inputs + gate * plane + row, start, length, d_x[gate],
                                           staging);
            carry = tile_total;
        }

        if (p.d_initial_state && threadIdx.x == 0)
#pragma unroll
            for (int k = 0; k < S; ++k)
                p.d_initial_state[p.rows.state_at(k, s)] = Element::get(carry, k);
                // The parameters' gradients: over the warp by shuffles, over the block in shared memory.
#pragma unroll
        for (int k = 0; k < P; ++k)
#pragma unroll
            for (int delta = scan::kWarpSize / 2; delta > 0; delta /= 2)
                d_params[k] += __shfl_xor_sync(kFullWarp, d_params[k], delta);
        if (lane == 0)
#pragma unroll
            for (int k = 0; k < P; ++k)
                block_sums[warp][k] = d_params[k];
        __syncthreads();
        if (threadIdx.x < P) {
            float sum = 0.0f;
            for (int w = 0; w < kWarps; ++w)
                sum += block_sums[w][threadIdx.x];
            atomicAdd(p.d_parameters + p.rows.parameter_at(static_cast<int>(threadIdx.x), s), sum);
        }
        // The next sequence must not overwrite block_sums (or the warps' states) before they are read.
        __syncthreads();
    }
}

} // namespace flashrnn::cuda::newton

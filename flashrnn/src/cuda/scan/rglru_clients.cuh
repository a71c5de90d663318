// The fused RG-LRU forward and backward as clients of the scan pipe (scan_pipe.cuh). The gates are
// computed from the pre-activations as the tile is unpacked (rglru_math.hpp, shared with the CPU
// reference), so only the inputs and h ever travel through memory.
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/chunk_io.cuh"
#include "cuda/scan/linrec_clients.cuh"
#include "cuda/scan/warp_shuffle.cuh"
#include "scan/rglru_math.hpp"

namespace flashrnn::cuda::scan {

// The gates' sigmoids on the special-function unit's tanh where the tensors are 16-bit (see
// rglru::elementary::coarse_sigmoid): the forward, the backward and the backward's neighbouring
// decay use the same choice, so every a is computed alike.
template <class T> inline constexpr bool kCoarseGates = sizeof(T) == 2;

struct RglruRowParams {
    const float* lambda; // [channels]
    const float* h0;     // [sequences] or null
    std::int64_t channels;
};

// h_t = a_t h_{t-1} + sqrt(1 - a_t^2) i_t x_t, in time order.
template <class T, int E, ScanAccess A> struct RglruForward {
    using Element = T;
    using Map = ScalarAffine;
    struct Params {
        RowPointer<const T> x, gate_a, gate_x;
        RowPointer<T> h;
        RglruRowParams rows;
        float* h_last;
        std::int64_t sequences, length;
    };
    struct Fetched {
        Chunk<T, E, A> x, gate_a, gate_x;
    };
    struct Unpacked {};
    using Shared = NoShared;
    // 16-bit tensors: registers capped for 32 resident warps (64 each; 96 uncapped at 8 x 32, 21
    // warps): on the H100 bf16 rows of 1024 went from 77 to 85% of copy. fp32 gained nothing.
    static constexpr int kMinWarpsPerSM = sizeof(T) == 2 ? 32 : 0;

    const Params& p;
    std::int64_t row;
    const T *x, *gate_a, *gate_x;
    T* h;
    float softplus_lambda;

    static __device__ __forceinline__ bool scan_reverse(const Params&) { return false; }
    __device__ __forceinline__ RglruForward(const Params& params, std::int64_t row_, Shared&)
        : p(params), row(row_), x(params.x.row(row_)), gate_a(params.gate_a.row(row_)),
          gate_x(params.gate_x.row(row_)), h(params.h.row(row_)),
          softplus_lambda(rglru::softplus(params.rows.lambda[row_ % params.rows.channels])) {}
    __device__ __forceinline__ float initial_state() const { return p.rows.h0 ? p.rows.h0[row] : 0.0f; }

    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        const T zero = from_float<T>(0.0f);
        f.x.fetch(x, start, p.length, zero);
        f.gate_a.fetch(gate_a, start, p.length, zero);
        f.gate_x.fetch(gate_x, start, p.length, zero);
    }
    __device__ __forceinline__ void unpack(std::int64_t start, const Fetched& f, Unpacked&, Map (&maps)[E],
                                           float* staging) const {
        float xs[E], as[E], is[E];
        f.x.unpack(xs, staging);
        f.gate_a.unpack(as, staging);
        f.gate_x.unpack(is, staging);
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const auto s = rglru::step<kCoarseGates<T>>(xs[e], as[e], is[e], softplus_lambda);
            maps[e] = start + e < p.length ? Map{s.a, s.b} : Map::identity();
        }
    }
    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked&, const float (&states)[E],
                                            float* staging) const {
        store_chunk<T, E, A>(h, start, p.length, states, staging);
    }
    __device__ __forceinline__ void finish(float final_state) const {
        if (p.h_last && threadIdx.x == 0) p.h_last[row] = final_state;
    }
};

// Backward, against time: g_t = dh_t + a_{t+1} g_{t+1} (g_L = dh_last) is the scan, with element t
// the map (a_{t+1}, dh_t); the gates are recomputed from the inputs; every per-step gradient is g_t
// times a coefficient of the step and h_{t-1} (rglru::step_gradient_coefficients), computed as the
// tile is unpacked, so that only four numbers per step wait for the scan. a_{t+1} and h_{t-1} cross
// chunk edges like linrec's neighbours. dLambda: each thread sums its steps, the block reduces, one
// atomic addition per row.
template <class T, int E, ScanAccess A> struct RglruBackward {
    using Element = T;
    using Map = ScalarAffine;
    struct Params {
        RowPointer<const T> x, gate_a, gate_x, h, dh;
        RowPointer<T> dx, d_gate_a, d_gate_x;
        RglruRowParams rows;
        const float* dh_last;
        float* d_lambda; // zeroed before the launch
        float* dh0;
        std::int64_t sequences, length;
    };
    struct Fetched {
        Chunk<T, E, A> x, gate_a, gate_x, h, dh;
        T gate_a_edge, h_edge; // gate_a after the chunk (last lane), h before it (lane 0)
    };
    struct Unpacked {
        rglru::StepGradients<float> coefficients[E]; // gradient = g_t * coefficient
        float a_first;                               // a of the chunk's first step (dh0 = a_0 g_0)
    };
    struct Shared {
        float partial[kWarpSize];
    };
    // Registers capped for 16 resident warps (128 each; 168 uncapped at 8 x 32, 12 warps): on the
    // H100 bf16 rows of 1024 went from 77 to 88% of copy, 65536 from 86 to 91%, fp32 1024 from 92
    // to 97% (docs/benchmarks.md).
    static constexpr int kMinWarpsPerSM = 16;

    const Params& p;
    Shared& shared;
    std::int64_t row;
    const T *x, *gate_a, *gate_x, *h, *dh;
    T *dx, *d_gate_a, *d_gate_x;
    float softplus_lambda, h_initial;
    float d_lambda_sum = 0.0f; // this thread's share of dL/dLambda / sigmoid(Lambda)

    static __device__ __forceinline__ bool scan_reverse(const Params&) { return true; }
    __device__ __forceinline__ RglruBackward(const Params& params, std::int64_t row_, Shared& shared_)
        : p(params), shared(shared_), row(row_), x(params.x.row(row_)), gate_a(params.gate_a.row(row_)),
          gate_x(params.gate_x.row(row_)), h(params.h.row(row_)), dh(params.dh.row(row_)),
          dx(params.dx.row(row_)), d_gate_a(params.d_gate_a.row(row_)), d_gate_x(params.d_gate_x.row(row_)),
          softplus_lambda(rglru::softplus(params.rows.lambda[row_ % params.rows.channels])),
          h_initial(params.rows.h0 ? params.rows.h0[row_] : 0.0f) {}
    __device__ __forceinline__ float initial_state() const { return p.dh_last ? p.dh_last[row] : 0.0f; }

    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        const T zero = from_float<T>(0.0f);
        f.x.fetch(x, start, p.length, zero);
        f.gate_a.fetch(gate_a, start, p.length, zero);
        f.gate_x.fetch(gate_x, start, p.length, zero);
        f.h.fetch(h, start, p.length, zero);
        f.dh.fetch(dh, start, p.length, zero);
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        f.gate_a_edge = zero;
        f.h_edge = zero;
        if (lane == kWarpSize - 1 && start + E < p.length) f.gate_a_edge = gate_a[start + E];
        if (lane == 0 && start >= 1 && start - 1 < p.length) f.h_edge = h[start - 1]; // inside the row only
    }

    __device__ __forceinline__ float decay(float gate_a_value) const {
        return rglru::step<kCoarseGates<T>>(0.0f, gate_a_value, 0.0f, softplus_lambda).a;
    }

    __device__ __forceinline__ void unpack(std::int64_t start, const Fetched& f, Unpacked& u, Map (&maps)[E],
                                           float* staging) const {
        float xs[E], gas[E], gxs[E], hs[E], dhs[E];
        f.x.unpack(xs, staging);
        f.gate_a.unpack(gas, staging);
        f.gate_x.unpack(gxs, staging);
        f.h.unpack(hs, staging);
        f.dh.unpack(dhs, staging);
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        const float h_of_previous_lane = shuffle_up(hs[E - 1], 1);
        const float h_edge = lane == 0 ? to_float(f.h_edge) : h_of_previous_lane;
        float as[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const auto s = rglru::step<kCoarseGates<T>>(xs[e], gas[e], gxs[e], softplus_lambda);
            const float h_before = start + e == 0 ? h_initial : (e > 0 ? hs[e - 1] : h_edge);
            u.coefficients[e] = rglru::step_gradient_coefficients(s, xs[e], h_before, softplus_lambda);
            as[e] = s.a;
        }
        u.a_first = as[0];
        const float a_of_next_lane = shuffle_down(as[0], 1);
        const float a_edge = lane == kWarpSize - 1 ? decay(to_float(f.gate_a_edge)) : a_of_next_lane;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const std::int64_t t = start + e;
            // The last step has no successor: its coefficient multiplies the carry dh_last as is.
            const float a_after = t + 1 >= p.length ? 1.0f : (e + 1 < E ? as[e + 1] : a_edge);
            maps[e] = t < p.length ? Map{a_after, dhs[e]} : Map::identity();
        }
    }

    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked& u, const float (&g)[E],
                                            float* staging) {
        float dxs[E], dgas[E], dgxs[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const rglru::StepGradients<float>& c = u.coefficients[e];
            dxs[e] = g[e] * c.dx;
            dgas[e] = g[e] * c.d_gate_a;
            dgxs[e] = g[e] * c.d_gate_x;
            if (start + e < p.length) d_lambda_sum = fmaf(g[e], c.d_lambda_over_sigmoid, d_lambda_sum);
        }
        if (start == 0 && p.dh0) p.dh0[row] = u.a_first * g[0];
        store_chunk<T, E, A>(dx, start, p.length, dxs, staging);
        store_chunk<T, E, A>(d_gate_a, start, p.length, dgas, staging);
        store_chunk<T, E, A>(d_gate_x, start, p.length, dgxs, staging);
    }

    // Every thread of the block calls it, once per row (a block takes several rows when there are
    // more than the grid holds: no thread may leave early).
    __device__ __forceinline__ void finish(float) {
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
        const int warps = static_cast<int>(blockDim.x) / kWarpSize;
        float sum = d_lambda_sum;
#pragma unroll
        for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
            sum += __shfl_xor_sync(kFullWarp, sum, offset);
        if (warps > 1) {
            if (lane == 0) shared.partial[warp] = sum;
            __syncthreads();
            sum = lane < warps ? shared.partial[lane] : 0.0f; // warp 0's sum is the one used
#pragma unroll
            for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
                sum += __shfl_xor_sync(kFullWarp, sum, offset);
            __syncthreads(); // the next row's finish rewrites `partial`
        }
        if (threadIdx.x == 0) {
            const float lambda = p.rows.lambda[row % p.rows.channels];
            atomicAdd(p.d_lambda + row % p.rows.channels, sum * cells::sigmoid(lambda));
        }
    }
};

} // namespace flashrnn::cuda::scan

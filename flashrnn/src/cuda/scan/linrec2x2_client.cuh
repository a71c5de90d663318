// The linear recurrence of 2-vectors, h_l = A_l h_{l-1} + b_l (A_l a 2x2 matrix), as a client of the
// scan pipe (scan_pipe.cuh) with Affine2x2 elements: the same pipe, block scan and shuffles as
// linrec's scalar maps. Each element's A is one 16-byte load, b one 8-byte load (direct access).
#pragma once

#include <cstdint>

#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/linrec_clients.cuh"
#include "cuda/scan/row_pointer.cuh"

namespace flashrnn::cuda::scan {

struct Linrec2x2Params {
    RowPointer<const float4> a; // A_l row-major: (a00, a01, a10, a11)
    RowPointer<const float2> b;
    RowPointer<float2> h;
    std::int64_t sequences, length;
};

template <int E> struct Linrec2x2Forward {
    using Element = float;
    using Map = Affine2x2;
    using Params = Linrec2x2Params;
    struct Fetched {
        float4 a[E];
        float2 b[E];
    };
    struct Unpacked {};
    using Shared = NoShared;

    const Params& p;
    const float4* a;
    const float2* b;
    float2* h;

    static __device__ __forceinline__ bool scan_reverse(const Params&) { return false; }
    __device__ __forceinline__ Linrec2x2Forward(const Params& params, std::int64_t row, Shared&)
        : p(params), a(params.a.row(row)), b(params.b.row(row)), h(params.h.row(row)) {}
    __device__ __forceinline__ Vector2 initial_state() const { return {0.0f, 0.0f}; }

    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const bool inside = start + e < p.length;
            f.a[e] = inside ? a[start + e] : float4{1.0f, 0.0f, 0.0f, 1.0f};
            f.b[e] = inside ? b[start + e] : float2{0.0f, 0.0f};
        }
    }
    __device__ __forceinline__ void unpack(std::int64_t, const Fetched& f, Unpacked&, Map (&maps)[E],
                                           float*) const {
#pragma unroll
        for (int e = 0; e < E; ++e)
            maps[e] = {f.a[e].x, f.a[e].y, f.a[e].z, f.a[e].w, f.b[e].x, f.b[e].y};
    }
    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked&, const Vector2 (&states)[E],
                                            float*) const {
#pragma unroll
        for (int e = 0; e < E; ++e)
            if (start + e < p.length) h[start + e] = float2{states[e].x, states[e].y};
    }
    __device__ __forceinline__ void finish(Vector2) const {}
};

} // namespace flashrnn::cuda::scan

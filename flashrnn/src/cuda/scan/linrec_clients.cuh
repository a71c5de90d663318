// linrec's forward and backward as clients of the scan pipe (scan_pipe.cuh).
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/chunk_io.cuh"
#include "cuda/scan/row_pointer.cuh"
#include "cuda/scan/warp_shuffle.cuh"

namespace flashrnn::cuda::scan {

struct NoShared {};

// The kernel arguments (the same for every configuration, and for the ref kernels).
template <class T> struct LinrecForwardParams {
    RowPointer<const T> x, c;
    RowPointer<T> y;
    std::int64_t sequences, length;
    bool reverse;
};
template <class T> struct LinrecBackwardParams {
    RowPointer<const T> dy, c, y;
    RowPointer<T> dx, dc;
    std::int64_t sequences, length;
    bool reverse; // of the forward
};

// y_l = c_l y_{l-1} + x_l: element l is the map (c_l, x_l); padding past the row is the identity.
template <class T, int E, ScanAccess A> struct LinrecForward {
    using Element = T;
    using Map = ScalarAffine;
    using Params = LinrecForwardParams<T>;
    struct Fetched {
        Chunk<T, E, A> x, c;
    };
    struct Unpacked {};
    using Shared = NoShared;

    const Params& p;
    const T *x, *c;
    T* y;

    static __device__ __forceinline__ bool scan_reverse(const Params& params) { return params.reverse; }
    __device__ __forceinline__ LinrecForward(const Params& params, std::int64_t row, Shared&)
        : p(params), x(params.x.row(row)), c(params.c.row(row)), y(params.y.row(row)) {}
    __device__ __forceinline__ float initial_state() const { return 0.0f; }

    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        f.x.fetch(x, start, p.length, from_float<T>(0.0f));
        f.c.fetch(c, start, p.length, from_float<T>(1.0f));
    }
    __device__ __forceinline__ void unpack(std::int64_t, const Fetched& f, Unpacked&, Map (&maps)[E],
                                           float* staging) const {
        float xs[E], cs[E];
        f.x.unpack(xs, staging);
        f.c.unpack(cs, staging);
#pragma unroll
        for (int e = 0; e < E; ++e)
            maps[e] = {cs[e], xs[e]};
    }
    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked&, const float (&states)[E],
                                            float* staging) const {
        store_chunk<T, E, A>(y, start, p.length, states, staging);
    }
    __device__ __forceinline__ void finish(float) const {}
};

// The backward runs against the forward's direction. With `next` the forward's step (+1, or -1 for a
// reverse forward), element l is the map (c_{l+next}, dy_l) (c past the row: 0, the carry is 0 there
// anyway) and dc_l = y_{l-next} dx_l (y before the row: 0). A thread's chunk needs one neighbouring
// c and one neighbouring y: from the adjacent lane by a shuffle, or, for the warp's edge lanes, from
// global memory (fetched with the chunk, so that the load is in flight early).
template <class T, int E, ScanAccess A> struct LinrecBackward {
    using Element = T;
    using Map = ScalarAffine;
    using Params = LinrecBackwardParams<T>;
    struct Fetched {
        Chunk<T, E, A> dy, c, y;
        T c_edge, y_edge;
    };
    struct Unpacked {
        float y_before[E]; // y_{l-next}
    };
    using Shared = NoShared;

    const Params& p;
    const T *dy, *c, *y;
    T *dx, *dc;

    static __device__ __forceinline__ bool scan_reverse(const Params& params) { return !params.reverse; }
    __device__ __forceinline__ LinrecBackward(const Params& params, std::int64_t row, Shared&)
        : p(params), dy(params.dy.row(row)), c(params.c.row(row)), y(params.y.row(row)),
          dx(params.dx.row(row)), dc(params.dc.row(row)) {}
    __device__ __forceinline__ float initial_state() const { return 0.0f; }

    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        const T zero = from_float<T>(0.0f);
        f.dy.fetch(dy, start, p.length, zero);
        f.c.fetch(c, start, p.length, zero);
        f.y.fetch(y, start, p.length, zero);
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        // Only positions inside the row are read (a chunk past the row's end has no neighbour to load).
        const std::int64_t after = start + E, before = start - 1;
        const bool before_in_row = before >= 0 && before < p.length;
        // forward step +1: c after the chunk (last lane), y before it (lane 0); step -1: the opposite.
        const bool last_lane = lane == kWarpSize - 1, first_lane = lane == 0;
        f.c_edge = zero;
        f.y_edge = zero;
        if (!p.reverse) {
            if (last_lane && after < p.length) f.c_edge = c[after];
            if (first_lane && before_in_row) f.y_edge = y[before];
        } else {
            if (first_lane && before_in_row) f.c_edge = c[before];
            if (last_lane && after < p.length) f.y_edge = y[after];
        }
    }

    __device__ __forceinline__ void unpack(std::int64_t start, const Fetched& f, Unpacked& u, Map (&maps)[E],
                                           float* staging) const {
        float dys[E], cs[E], ys[E];
        f.dy.unpack(dys, staging);
        f.c.unpack(cs, staging);
        f.y.unpack(ys, staging);
        const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
        const bool last_lane = lane == kWarpSize - 1, first_lane = lane == 0;
        // Shuffles by every lane, then the edge lanes take the fetched value.
        const float c_of_next_lane = shuffle_down(cs[0], 1), c_of_previous_lane = shuffle_up(cs[E - 1], 1);
        const float y_of_next_lane = shuffle_down(ys[0], 1), y_of_previous_lane = shuffle_up(ys[E - 1], 1);
        const int next = p.reverse ? -1 : 1;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            float c_after, y_before;
            if (next > 0) {
                c_after = e + 1 < E ? cs[e + 1] : (last_lane ? to_float(f.c_edge) : c_of_next_lane);
                y_before = e > 0 ? ys[e - 1] : (first_lane ? to_float(f.y_edge) : y_of_previous_lane);
            } else {
                c_after = e > 0 ? cs[e - 1] : (first_lane ? to_float(f.c_edge) : c_of_previous_lane);
                y_before = e + 1 < E ? ys[e + 1] : (last_lane ? to_float(f.y_edge) : y_of_next_lane);
            }
            const std::int64_t l = start + e;
            const std::int64_t successor = l + next, predecessor = l - next;
            if (successor < 0 || successor >= p.length) c_after = 0.0f;
            if (predecessor < 0 || predecessor >= p.length) y_before = 0.0f;
            maps[e] = l < p.length ? Map{c_after, dys[e]} : Map::identity();
            u.y_before[e] = y_before;
        }
    }

    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked& u, const float (&states)[E],
                                            float* staging) const {
        float dcs[E];
#pragma unroll
        for (int e = 0; e < E; ++e)
            dcs[e] = u.y_before[e] * states[e];
        store_chunk<T, E, A>(dx, start, p.length, states, staging);
        store_chunk<T, E, A>(dc, start, p.length, dcs, staging);
    }
    __device__ __forceinline__ void finish(float) const {}
};

} // namespace flashrnn::cuda::scan

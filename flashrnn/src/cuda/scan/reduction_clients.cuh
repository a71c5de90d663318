// The Newton solvers' reduction (newton/reduction.hpp: x_l = J_l x_{l-1} + r_l, scalar or 2x2 J) as
// clients of the scan pipe (scan_pipe.cuh), with ScalarAffine or Affine2x2 elements: the same pipe,
// block scan and shuffles as linrec's. The Jacobian and right-hand-side components are separate rows
// ([K, sequences, L] and [N, sequences, L]), each loaded as a chunk like linrec's tensors.
//
// The grid level: a pipe row is one segment of one sequence (row = sequence * segments + segment,
// segments of `segment_length` elements, the last one shorter). With one segment per sequence the
// solve is one launch. With more, three stream-ordered launches (reduce, then scan, then solve):
//   ReductionTotals   each segment's composed map, written to `totals` (the pipe with Composed maps,
//                     whose state is the map composed so far);
//   SegmentCarries    per sequence, the scan over its segments' totals (a pipe row of `segments`
//                     maps): the state entering each segment, written to `entering`;
//   ReductionSolve    each segment from its entering state.
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/scan/affine_map.cuh"
#include "cuda/scan/chunk_io.cuh"
#include "cuda/scan/linrec_clients.cuh"

namespace flashrnn::cuda::scan {

// A map whose state is a map: apply(before) composes, so that the pipe's carry, started from the
// identity, is the composed map of everything scanned so far (a segment's total).
template <class M> struct Composed {
    using State = M;
    M map;

    static __device__ __forceinline__ Composed identity() { return {M::identity()}; }
    __device__ __forceinline__ State apply(const State& before) const { return then(before, map); }
    friend __device__ __forceinline__ Composed then(const Composed& first, const Composed& second) {
        return {then(first.map, second.map)};
    }
};

// What the reduction needs to know of its element type: the numbers of Jacobian (K) and right-hand-side
// (N) rows, the map of one equation, a state's components (get, set), and the Jacobian rows' padding
// (the identity) past a row's end.
template <class M> struct ReductionElement;

template <> struct ReductionElement<ScalarAffine> {
    static constexpr int K = 1, N = 1;
    static __device__ __forceinline__ float jacobian_fill(int) { return 1.0f; }
    static __device__ __forceinline__ ScalarAffine map(const float (&j)[K], const float (&r)[N]) {
        return {j[0], r[0]};
    }
    // "prefix, then h -> j (h - point) + value" (a step linearised about `point`): its offset is not formed.
    static __device__ __forceinline__ ScalarAffine then_about(const ScalarAffine& prefix, const float (&j)[K],
                                                              const float (&point)[N],
                                                              const float (&value)[N]) {
        return {j[0] * prefix.a, fmaf(j[0], prefix.b - point[0], value[0])};
    }
    static __device__ __forceinline__ float get(float state, int) { return state; }
    static __device__ __forceinline__ void set(float& state, int, float value) { state = value; }
};

template <> struct ReductionElement<Affine2x2> {
    static constexpr int K = 4, N = 2;
    static __device__ __forceinline__ float jacobian_fill(int k) { return k == 0 || k == 3 ? 1.0f : 0.0f; }
    static __device__ __forceinline__ Affine2x2 map(const float (&j)[K], const float (&r)[N]) {
        return {j[0], j[1], j[2], j[3], r[0], r[1]};
    }
    // "prefix, then h -> J (h - point) + value" (a step linearised about `point`): J (b - point) + value
    // takes 2 subtractions and 4 FMAs where the offset value - J point and then J b + offset take 8.
    static __device__ __forceinline__ Affine2x2 then_about(const Affine2x2& prefix, const float (&j)[K],
                                                           const float (&point)[N], const float (&value)[N]) {
        const float d0 = prefix.b0 - point[0], d1 = prefix.b1 - point[1];
        return {fmaf(j[0], prefix.a00, j[1] * prefix.a10), fmaf(j[0], prefix.a01, j[1] * prefix.a11),
                fmaf(j[2], prefix.a00, j[3] * prefix.a10), fmaf(j[2], prefix.a01, j[3] * prefix.a11),
                fmaf(j[0], d0, fmaf(j[1], d1, value[0])),  fmaf(j[2], d0, fmaf(j[3], d1, value[1]))};
    }
    static __device__ __forceinline__ float get(const Vector2& state, int i) {
        return i == 0 ? state.x : state.y;
    }
    static __device__ __forceinline__ void set(Vector2& state, int i, float value) {
        (i == 0 ? state.x : state.y) = value;
    }
};

// The kernel arguments of every reduction pipe. `sequences` and `length` are the pipe's (rows of
// segments, the segment length); `rows` and `row_length` the problem's.
template <class T> struct ReductionParams {
    const T* jacobians; // [K, rows, row_length]
    const T* rhs;       // [N, rows, row_length]
    T* solution;        // [N, rows, row_length]: written, or (accumulate) added to
    std::int64_t rows, row_length;
    std::int64_t sequences, length; // the pipe's: rows * segments, segment_length
    std::int64_t segments;
    bool reverse;
    float* totals;   // [rows * segments] composed maps (grid level only)
    float* entering; // [rows * segments] states entering each segment; null with one segment
    const int* skip; // accumulate: rows whose entry is >= 0 are left alone; may be null
};

// One segment of one sequence: its rows and its equations' maps.
template <class T, class M, int E, ScanAccess A> struct ReductionSegment {
    using Element = T;
    using Params = ReductionParams<T>;
    using Traits = ReductionElement<M>;
    static constexpr int K = Traits::K, N = Traits::N;
    struct Loads {
        Chunk<T, E, A> j[K], r[N];
    };

    const Params& p;
    std::int64_t sequence, entry, length; // entry: sequence * segments + segment; length: of the segment
    std::int64_t offset;                  // of the segment's first element within a component row
    std::int64_t plane;                   // elements of one component [rows, row_length]

    __device__ __forceinline__ ReductionSegment(const Params& params, std::int64_t row)
        : p(params), sequence(row / params.segments), entry(row) {
        const std::int64_t begin = (row % params.segments) * params.length;
        length = params.row_length - begin < params.length ? params.row_length - begin : params.length;
        offset = sequence * params.row_length + begin;
        plane = params.rows * params.row_length;
    }

    __device__ __forceinline__ void fetch_maps(std::int64_t start, Loads& f) const {
#pragma unroll
        for (int k = 0; k < K; ++k)
            f.j[k].fetch(p.jacobians + k * plane + offset, start, length,
                         from_float<T>(Traits::jacobian_fill(k)));
#pragma unroll
        for (int i = 0; i < N; ++i)
            f.r[i].fetch(p.rhs + i * plane + offset, start, length, from_float<T>(0.0f));
    }
    __device__ __forceinline__ void unpack_maps(const Loads& f, M (&maps)[E], float* staging) const {
        float j[K][E], r[N][E];
#pragma unroll
        for (int k = 0; k < K; ++k)
            f.j[k].unpack(j[k], staging);
#pragma unroll
        for (int i = 0; i < N; ++i)
            f.r[i].unpack(r[i], staging);
#pragma unroll
        for (int e = 0; e < E; ++e) {
            float je[K], re[N];
#pragma unroll
            for (int k = 0; k < K; ++k)
                je[k] = j[k][e];
#pragma unroll
            for (int i = 0; i < N; ++i)
                re[i] = r[i][e];
            maps[e] = Traits::map(je, re);
        }
    }
};

// Solves a segment from its entering state: writes the solution (kAccumulate false) or adds it to
// the fp32 `solution` (the Newton update of the iterate), except in rows marked in `skip`.
template <class T, class M, int E, ScanAccess A, bool kAccumulate>
struct ReductionSolve : ReductionSegment<T, M, E, A> {
    using Base = ReductionSegment<T, M, E, A>;
    using Base::K, Base::N, Base::p, Base::length, Base::offset, Base::plane;
    using Map = M;
    using State = typename M::State;
    using Traits = typename Base::Traits;
    using Params = typename Base::Params;
    struct Fetched {
        typename Base::Loads maps;
        Chunk<T, E, A> x[kAccumulate ? N : 1]; // the iterate, when accumulating
    };
    struct Unpacked {
        float x[kAccumulate ? N : 1][kAccumulate ? E : 1];
    };
    using Shared = NoShared;
    static_assert(!kAccumulate || sizeof(T) == 4, "the Newton iterate is fp32");

    bool skipped;

    static __device__ __forceinline__ bool scan_reverse(const Params& params) { return params.reverse; }
    __device__ __forceinline__ ReductionSolve(const Params& params, std::int64_t row, Shared&)
        : Base(params, row), skipped(kAccumulate && params.skip && params.skip[this->sequence] >= 0) {}

    __device__ __forceinline__ State initial_state() const {
        State state{};
        if (p.entering)
#pragma unroll
            for (int i = 0; i < N; ++i)
                Traits::set(state, i, p.entering[this->entry * N + i]);
        return state;
    }
    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        this->fetch_maps(start, f.maps);
        if constexpr (kAccumulate)
#pragma unroll
            for (int i = 0; i < N; ++i)
                f.x[i].fetch(p.solution + i * plane + offset, start, length, from_float<T>(0.0f));
    }
    __device__ __forceinline__ void unpack(std::int64_t, const Fetched& f, Unpacked& u, Map (&maps)[E],
                                           float* staging) const {
        this->unpack_maps(f.maps, maps, staging);
        if constexpr (kAccumulate)
#pragma unroll
            for (int i = 0; i < N; ++i)
                f.x[i].unpack(u.x[i], staging);
    }
    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked& u, const State (&states)[E],
                                            float* staging) const {
        if (skipped) return; // the same for the whole block
#pragma unroll
        for (int i = 0; i < N; ++i) {
            float values[E];
#pragma unroll
            for (int e = 0; e < E; ++e) {
                values[e] = Traits::get(states[e], i);
                if constexpr (kAccumulate) values[e] += u.x[i][e];
            }
            store_chunk<T, E, A>(p.solution + i * plane + offset, start, length, values, staging);
        }
    }
    __device__ __forceinline__ void finish(const State&) const {}
};

// A segment's composed map, written to totals[entry] (grid level, first launch).
template <class T, class M, int E, ScanAccess A> struct ReductionTotals : ReductionSegment<T, M, E, A> {
    using Base = ReductionSegment<T, M, E, A>;
    using Map = Composed<M>;
    using Params = typename Base::Params;
    using Fetched = typename Base::Loads;
    struct Unpacked {};
    using Shared = NoShared;

    static __device__ __forceinline__ bool scan_reverse(const Params& params) { return params.reverse; }
    __device__ __forceinline__ ReductionTotals(const Params& params, std::int64_t row, Shared&)
        : Base(params, row) {}
    __device__ __forceinline__ M initial_state() const { return M::identity(); }
    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
        this->fetch_maps(start, f);
    }
    __device__ __forceinline__ void unpack(std::int64_t, const Fetched& f, Unpacked&, Map (&maps)[E],
                                           float* staging) const {
        M plain[E];
        this->unpack_maps(f, plain, staging);
#pragma unroll
        for (int e = 0; e < E; ++e)
            maps[e] = {plain[e]};
    }
    __device__ __forceinline__ void consume(std::int64_t, const Unpacked&, const M (&)[E], float*) const {}
    __device__ __forceinline__ void finish(const M& total) const {
        if (threadIdx.x == 0) reinterpret_cast<M*>(this->p.totals)[this->entry] = total;
    }
};

// The scan over one sequence's segment totals (grid level, second launch): pipe row = sequence, its
// `length` elements the segments. Writes the state entering each segment (zero for the first in
// scan order), i.e. the inclusive state of the segment before it.
struct SegmentCarryParams {
    const float* totals; // [sequences, segments] composed maps
    float* entering;     // [sequences, segments] states
    std::int64_t sequences, length;
    bool reverse;
};

template <class M, int E> struct SegmentCarries {
    using Element = float;
    using Map = M;
    using State = typename M::State;
    using Params = SegmentCarryParams;
    using Traits = ReductionElement<M>;
    struct Fetched {
        M maps[E];
    };
    struct Unpacked {};
    using Shared = NoShared;

    const Params& p;
    const M* totals;
    State* entering;

    static __device__ __forceinline__ bool scan_reverse(const Params& params) { return params.reverse; }
    __device__ __forceinline__ SegmentCarries(const Params& params, std::int64_t row, Shared&)
        : p(params), totals(reinterpret_cast<const M*>(params.totals) + row * params.length),
          entering(reinterpret_cast<State*>(params.entering) + row * params.length) {}
    __device__ __forceinline__ State initial_state() const { return State{}; }
    __device__ __forceinline__ void fetch(std::int64_t start, Fetched& f) const {
#pragma unroll
        for (int e = 0; e < E; ++e)
            f.maps[e] = start + e < p.length ? totals[start + e] : M::identity();
    }
    __device__ __forceinline__ void unpack(std::int64_t, const Fetched& f, Unpacked&, Map (&maps)[E],
                                           float*) const {
#pragma unroll
        for (int e = 0; e < E; ++e)
            maps[e] = f.maps[e];
    }
    __device__ __forceinline__ void consume(std::int64_t start, const Unpacked&, const State (&states)[E],
                                            float*) const {
        const std::int64_t step = p.reverse ? -1 : 1, first = p.reverse ? p.length - 1 : 0;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const std::int64_t l = start + e, next = l + step;
            if (l >= p.length) continue;
            if (next >= 0 && next < p.length) entering[next] = states[e];
            if (l == first) entering[l] = State{};
        }
    }
    __device__ __forceinline__ void finish(const State&) const {}
};

} // namespace flashrnn::cuda::scan

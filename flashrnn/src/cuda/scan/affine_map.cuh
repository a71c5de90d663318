// The element types of the scans: affine maps h -> a h + b, composed associatively. The scan core only
// uses identity(), then(first, second) and apply(h) (and warp_scan_from.cuh image_of_zero()), so a
// block map is another struct with the same members: ScalarAffine (linrec, the RG-LRU)
// and Affine2x2 (2x2 matrix, 2-vector: the element of the Newton solvers' linearised LSTM steps; linrec2x2.cu
// runs it through the same pipe).
#pragma once

namespace flashrnn::cuda::scan {

struct ScalarAffine {
    using State = float;
    float a, b;

    static __device__ __forceinline__ ScalarAffine identity() { return {1.0f, 0.0f}; }

    __device__ __forceinline__ State image_of_zero() const { return b; }

    __device__ __forceinline__ State apply(State h) const { return fmaf(a, h, b); }

    // The map "first, then second": h -> second.a (first.a h + first.b) + second.b.
    friend __device__ __forceinline__ ScalarAffine then(const ScalarAffine& first,
                                                        const ScalarAffine& second) {
        return {second.a * first.a, fmaf(second.a, first.b, second.b)};
    }
};

struct Vector2 {
    float x, y;
};

// h -> A h + b with A = [[a00, a01], [a10, a11]].
struct Affine2x2 {
    using State = Vector2;
    float a00, a01, a10, a11, b0, b1;

    static __device__ __forceinline__ Affine2x2 identity() { return {1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}; }

    __device__ __forceinline__ State image_of_zero() const { return {b0, b1}; }

    __device__ __forceinline__ State apply(State h) const {
        return {fmaf(a00, h.x, fmaf(a01, h.y, b0)), fmaf(a10, h.x, fmaf(a11, h.y, b1))};
    }

    // "first, then second": A = A2 A1, b = A2 b1 + b2.
    friend __device__ __forceinline__ Affine2x2 then(const Affine2x2& first, const Affine2x2& second) {
        return {fmaf(second.a00, first.a00, second.a01 * first.a10),
                fmaf(second.a00, first.a01, second.a01 * first.a11),
                fmaf(second.a10, first.a00, second.a11 * first.a10),
                fmaf(second.a10, first.a01, second.a11 * first.a11),
                fmaf(second.a00, first.b0, fmaf(second.a01, first.b1, second.b0)),
                fmaf(second.a10, first.b0, fmaf(second.a11, first.b1, second.b1))};
    }
};

} // namespace flashrnn::cuda::scan

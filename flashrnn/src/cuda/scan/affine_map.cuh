// The element type of the scans: affine maps h -> a h + b, composed associatively. The scan core only
// uses identity(), then(first, second) and apply(h), so a block map (2x2 matrix a, 2-vector b, for the
// Newton LSTM solver) is another struct with the same three members.
#pragma once

namespace flashrnn::cuda::scan {

struct ScalarAffine {
    using State = float;
    float a, b;

    static __device__ __forceinline__ ScalarAffine identity() { return {1.0f, 0.0f}; }

    __device__ __forceinline__ State apply(State h) const { return fmaf(a, h, b); }

    // The map "first, then second": h -> second.a (first.a h + first.b) + second.b.
    friend __device__ __forceinline__ ScalarAffine then(const ScalarAffine& first, const ScalarAffine& second) {
        return {second.a * first.a, fmaf(second.a, first.b, second.b)};
    }
};

} // namespace flashrnn::cuda::scan

// The number types the fused Newton forward evaluates the cell headers with (the cells are templates on
// their number type, so the one source of the math stays the cell header): a float whose tanh and
// sigmoid are computed one of two ways, found by argument-dependent lookup ahead of the cells' generic
// sigmoid and std's tanh.
//  - Activations::hardware_tanh: tanh.approx.f32, one special-function (MUFU) instruction with a
//    relative error up to 2^-11, and the sigmoid as 0.5 tanh(x / 2) + 0.5 through it. Half the MUFU work
//    of exp and a reciprocal: the kernel is bound by that unit, and Newton's early iterations only need
//    to come close (the last one, accurate, corrects what they leave).
//  - Activations::exp_reciprocal: the sigmoid as 1 / (1 + exp(-x)) and tanh as 1 - 2 / (1 + exp(2x)),
//    two MUFU instructions each (ex2.approx and rcp.approx), absolute error about 1e-7; for the last
//    iteration and the residual statistic, so that the returned states solve the cell to fp32 accuracy.
#pragma once

#include "cuda/common/hardware_tanh.cuh"

namespace flashrnn::cuda::newton {

enum class Activations { hardware_tanh, exp_reciprocal };

template <Activations A> struct ActivationFloat {
    float value;

    ActivationFloat() = default;
    __device__ __forceinline__ constexpr ActivationFloat(float v) : value(v) {}
    // The cells write T(1) for the constant one.
    __device__ __forceinline__ constexpr explicit ActivationFloat(int v) : value(static_cast<float>(v)) {}

    friend __device__ __forceinline__ ActivationFloat operator+(ActivationFloat a, ActivationFloat b) {
        return a.value + b.value;
    }
    friend __device__ __forceinline__ ActivationFloat operator-(ActivationFloat a, ActivationFloat b) {
        return a.value - b.value;
    }
    friend __device__ __forceinline__ ActivationFloat operator*(ActivationFloat a, ActivationFloat b) {
        return a.value * b.value;
    }
    friend __device__ __forceinline__ ActivationFloat operator-(ActivationFloat a) { return -a.value; }

    friend __device__ __forceinline__ ActivationFloat tanh(ActivationFloat x) {
        if constexpr (A == Activations::hardware_tanh) {
            return cuda::hardware_tanh(x.value);
        } else {
            // exp(2x) overflowing to infinity gives 1, underflowing to 0 gives -1. exp(2x) as 2^(x 2
            // log2(e)): one multiplication (the product 2x is exact, so the value is __expf(2x)'s).
            return 1.0f - __fdividef(2.0f, 1.0f + exp2f(x.value * 2.885390081777926815f));
        }
    }
    // s (1 - s) as s - s s: one FMA instead of a subtraction and a product (the cells' Jacobians take
    // two per step).
    friend __device__ __forceinline__ ActivationFloat sigmoid_derivative_from_output(ActivationFloat s) {
        return fmaf(-s.value, s.value, s.value);
    }
    friend __device__ __forceinline__ ActivationFloat sigmoid(ActivationFloat x) {
        if constexpr (A == Activations::hardware_tanh)
            return 0.5f * tanh(ActivationFloat(0.5f * x.value)).value + 0.5f;
        else
            return __fdividef(1.0f, 1.0f + __expf(-x.value));
    }
};

// Between the kernel's float arrays and the cells' arguments (registers either way: no cost).
template <Activations A, int N>
__device__ __forceinline__ void copy_into(ActivationFloat<A> (&to)[N], const float (&from)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
        to[i] = from[i];
}
template <Activations A, int N>
__device__ __forceinline__ void copy_out(float (&to)[N], const ActivationFloat<A> (&from)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
        to[i] = from[i].value;
}

} // namespace flashrnn::cuda::newton

// The RG-LRU's pointwise math, written once for the float64 CPU reference and the fp32 kernels.
#pragma once

#include <cmath>

#include "cuda/common/hardware_tanh.cuh"
#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::rglru {

// log a = -8 r softplus(Lambda): the constant c = 8 of Griffin.
inline constexpr double kGateScale = 8.0;
// The largest derivative of sqrt(u) the backward uses (u = 1 - a^2 -> 0 as a -> 1).
inline constexpr double kMaxSqrtDerivative = 1000.0;

template <class T> FLASHRNN_HOST_DEVICE inline T softplus(T x) {
    using std::exp;
    using std::fabs;
    using std::log1p;
    return (x > T(0) ? x : T(0)) + log1p(exp(-fabs(x)));
}

// The elementary functions of a step: exact (std) in the float64 reference; in the fp32 kernels the
// special-function unit's approximations (a few ulp, far inside the tests' fp32 tolerance of 1e-4),
// which keep a step at five such instructions: the fused kernels are otherwise bound by their math.
namespace elementary {

FLASHRNN_HOST_DEVICE inline double exp(double x) {
    return std::exp(x);
}
FLASHRNN_HOST_DEVICE inline double reciprocal(double x) {
    return 1.0 / x;
}
FLASHRNN_HOST_DEVICE inline double sqrt(double x) {
    return std::sqrt(x);
}
// 1 - exp(x) for x <= 0, without cancellation near 0.
FLASHRNN_HOST_DEVICE inline double one_minus_exp(double x, double) {
    return -std::expm1(x);
}

#if defined(__CUDA_ARCH__)
__device__ inline float exp(float x) {
    return __expf(x);
}
__device__ inline float reciprocal(float x) {
    return __fdividef(1.0f, x);
}
__device__ inline float sqrt(float x) {
    return x > 0.0f ? x * rsqrtf(x) : 0.0f;
}
// `exp_x` = exp(x), already known. Near 0, the Taylor polynomial of degree 6 (relative error below
// 1e-7 for x > -1/4); below, 1 - exp(x) >= 0.22 loses nothing to cancellation.
__device__ inline float one_minus_exp(float x, float exp_x) {
    if (x < -0.25f) return 1.0f - exp_x;
    const float p =
        1.0f + x * (1.0f / 2 + x * (1.0f / 6 + x * (1.0f / 24 + x * (1.0f / 120 + x * (1.0f / 720)))));
    return -x * p;
}
#else
inline float exp(float x) {
    return std::exp(x);
}
inline float reciprocal(float x) {
    return 1.0f / x;
}
inline float sqrt(float x) {
    return std::sqrt(x);
}
inline float one_minus_exp(float x, float) {
    return -std::expm1(x);
}
#endif

template <class T> FLASHRNN_HOST_DEVICE inline T sigmoid(T x) {
    return reciprocal(T(1) + exp(-x));
}

// 1 / sqrt(u) for u >= 0 (+infinity at 0).
FLASHRNN_HOST_DEVICE inline double inverse_sqrt(double u) {
    return 1.0 / std::sqrt(u);
}
#if defined(__CUDA_ARCH__)
__device__ inline float inverse_sqrt(float u) {
    return rsqrtf(u);
}
// sigmoid(x) = (1 + tanh(x / 2)) / 2 with the special-function unit's tanh: one instruction instead
// of two (exp, reciprocal), absolute error about 3e-4. Only where the values are stored in 16 bits
// (rounding 4e-3): the kernels with bf16 tensors use it (kCoarseGates), fp32 ones never.
__device__ inline float coarse_sigmoid(float x) {
    return fmaf(0.5f, cuda::hardware_tanh(0.5f * x), 0.5f);
}
#else
inline float inverse_sqrt(float u) {
    return 1.0f / std::sqrt(u);
}
inline float coarse_sigmoid(float x) {
    return sigmoid(x);
}
#endif
FLASHRNN_HOST_DEVICE inline double coarse_sigmoid(double x) {
    return sigmoid(x);
}

} // namespace elementary

// The per-step quantities of the forward: h_t = a h_{t-1} + b.
template <class T> struct Step {
    T r, i, a, multiplier, b; // multiplier = sqrt(1 - a^2)
    T inverse_multiplier;     // 1 / multiplier (+infinity where a = 1), for the backward
};

// kCoarseGates: the gates' sigmoids on the special-function unit's tanh (elementary::coarse_sigmoid;
// the kernels of 16-bit tensors). Without it, and always in float64, the plain sigmoid.
template <bool kCoarseGates = false, class T>
FLASHRNN_HOST_DEVICE inline Step<T> step(T x, T gate_a, T gate_x, T softplus_lambda) {
    Step<T> s;
    s.r = kCoarseGates ? elementary::coarse_sigmoid(gate_a) : elementary::sigmoid(gate_a);
    s.i = kCoarseGates ? elementary::coarse_sigmoid(gate_x) : elementary::sigmoid(gate_x);
    const T log_a = -T(kGateScale) * s.r * softplus_lambda;
    s.a = elementary::exp(log_a);
    // 1 - a^2 = 1 - exp(2 log a), without cancellation near a = 1. sqrt(u) = u / sqrt(u): one
    // reciprocal square root serves the forward's multiplier and the backward's derivative of sqrt.
    const T u = elementary::one_minus_exp(T(2) * log_a, s.a * s.a);
    s.inverse_multiplier = elementary::inverse_sqrt(u);
    s.multiplier = u > T(0) ? u * s.inverse_multiplier : T(0);
    s.b = s.multiplier * s.i * x;
    return s;
}

// Gradients of one step, given g = dL/dh_t (everything that flows into h_t) and h_{t-1}.
template <class T> struct StepGradients {
    T dx, d_gate_a, d_gate_x;
    T d_lambda_over_sigmoid; // dL/dLambda = this * sigmoid(Lambda)
};

// Each gradient of a step is g times a coefficient that depends only on the forward's values: the
// kernels compute the coefficients before g is known (while the scan runs) and keep four numbers per
// step instead of the step's inputs.
template <class T>
FLASHRNN_HOST_DEVICE inline StepGradients<T> step_gradient_coefficients(const Step<T>& s, T x, T h_prev,
                                                                        T softplus_lambda) {
    // d sqrt(u)/du = 1 / (2 sqrt(u)), clipped; u = 1 - a^2 = multiplier^2.
    const T half_over_sqrt = T(0.5) * s.inverse_multiplier;
    const T d_sqrt = half_over_sqrt < T(kMaxSqrtDerivative) ? half_over_sqrt : T(kMaxSqrtDerivative);
    const T gated_x = s.i * x;
    // d h_t / d log a = a (h_{t-1} - 2 a i x d_sqrt)
    const T d_log_a = (h_prev + gated_x * d_sqrt * (-T(2) * s.a)) * s.a;
    StepGradients<T> c;
    c.dx = s.multiplier * s.i;
    c.d_gate_x = s.multiplier * x * cells::sigmoid_derivative_from_output(s.i);
    c.d_gate_a = d_log_a * (-T(kGateScale) * softplus_lambda) * cells::sigmoid_derivative_from_output(s.r);
    c.d_lambda_over_sigmoid = d_log_a * (-T(kGateScale) * s.r);
    return c;
}

template <class T>
FLASHRNN_HOST_DEVICE inline StepGradients<T> step_backward(const Step<T>& s, T x, T g, T h_prev,
                                                           T softplus_lambda) {
    const StepGradients<T> c = step_gradient_coefficients(s, x, h_prev, softplus_lambda);
    return {g * c.dx, g * c.d_gate_a, g * c.d_gate_x, g * c.d_lambda_over_sigmoid};
}

} // namespace flashrnn::rglru

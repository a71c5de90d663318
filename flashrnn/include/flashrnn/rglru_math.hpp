// The RG-LRU's pointwise math, written once for the float64 CPU reference and the fp32 kernels.
#pragma once

#include <cmath>

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/host_device.hpp"

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

// The per-step quantities of the forward: h_t = a h_{t-1} + b.
template <class T> struct Step {
    T r, i, a, multiplier, b; // multiplier = sqrt(1 - a^2)
};

template <class T>
FLASHRNN_HOST_DEVICE inline Step<T> step(T x, T gate_a, T gate_x, T softplus_lambda) {
    using std::exp;
    using std::expm1;
    using std::sqrt;
    Step<T> s;
    s.r = cells::sigmoid(gate_a);
    s.i = cells::sigmoid(gate_x);
    const T log_a = -T(kGateScale) * s.r * softplus_lambda;
    s.a = exp(log_a);
    s.multiplier = sqrt(-expm1(T(2) * log_a)); // 1 - a^2 without cancellation near a = 1
    s.b = s.multiplier * s.i * x;
    return s;
}

// Gradients of one step, given g = dL/dh_t (everything that flows into h_t) and h_{t-1}.
template <class T> struct StepGradients {
    T dx, d_gate_a, d_gate_x;
    T d_lambda_over_sigmoid; // dL/dLambda = this * sigmoid(Lambda)
};

template <class T>
FLASHRNN_HOST_DEVICE inline StepGradients<T> step_backward(const Step<T>& s, T x, T g, T h_prev,
                                                           T softplus_lambda) {
    using std::sqrt;
    // d sqrt(u)/du = 1 / (2 sqrt(u)), clipped; u = 1 - a^2 = multiplier^2.
    const T half_over_sqrt = T(0.5) / s.multiplier;
    const T d_sqrt = half_over_sqrt < T(kMaxSqrtDerivative) ? half_over_sqrt : T(kMaxSqrtDerivative);
    const T gated_x = s.i * x;
    const T d_a = g * h_prev + g * gated_x * d_sqrt * (-T(2) * s.a);
    const T d_log_a = d_a * s.a;
    StepGradients<T> d;
    d.dx = g * s.multiplier * s.i;
    d.d_gate_x = g * s.multiplier * x * cells::sigmoid_derivative_from_output(s.i);
    d.d_gate_a = d_log_a * (-T(kGateScale) * softplus_lambda) * cells::sigmoid_derivative_from_output(s.r);
    d.d_lambda_over_sigmoid = d_log_a * (-T(kGateScale) * s.r);
    return d;
}

} // namespace flashrnn::rglru

// Scalar activation functions and the derivatives the cell backward passes need, written once for
// the host (double reference) and the device (float kernels).
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cmath>
#endif

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

// The math functions the cells call unqualified after `using math::exp;` (so that double, float and
// user types all resolve): std's on the host and in nvcc, NVRTC's built-in global ones in the fused
// kernels compiled at run time (NVRTC has no standard library).
namespace math {
#if defined(__CUDACC_RTC__)
using ::exp;
using ::fabs;
using ::log1p;
using ::tanh;
#else
using std::exp;
using std::fabs;
using std::log1p;
using std::tanh;
#endif
} // namespace math

template <class T> FLASHRNN_HOST_DEVICE inline T sigmoid(T x) {
    using math::exp;
    return T(1) / (T(1) + exp(-x));
}

// log(sigmoid(x)) = -log(1 + exp(-x)), evaluated without overflow for large |x|.
template <class T> FLASHRNN_HOST_DEVICE inline T log_sigmoid(T x) {
    using math::exp;
    using math::fabs;
    using math::log1p;
    const T negative_part = x < T(0) ? x : T(0);
    return negative_part - log1p(exp(-fabs(x)));
}

// Derivatives expressed through the activation's output, which the backward already has.
template <class T> FLASHRNN_HOST_DEVICE inline T sigmoid_derivative_from_output(T s) {
    return s * (T(1) - s);
}
template <class T> FLASHRNN_HOST_DEVICE inline T tanh_derivative_from_output(T t) {
    return T(1) - t * t;
}

template <class T> FLASHRNN_HOST_DEVICE inline T clamp(T x, T lo, T hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

} // namespace flashrnn::cells

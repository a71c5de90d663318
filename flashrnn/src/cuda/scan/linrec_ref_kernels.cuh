// The paper's reference kernels: one thread per row, a sequential loop (for benchmarks and as a
// simple second opinion; the pipe is the fast path).
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/scan/linrec_clients.cuh"

namespace flashrnn::cuda::scan {

template <class T> __global__ void linrec_ref_forward_kernel(const LinrecForwardParams<T> p) {
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < p.sequences;
         r += threads) {
        const T *x = p.x.row(r), *c = p.c.row(r);
        T* y = p.y.row(r);
        float h = 0.0f;
        for (std::int64_t step = 0; step < p.length; ++step) {
            const std::int64_t l = p.reverse ? p.length - 1 - step : step;
            h = fmaf(to_float(c[l]), h, to_float(x[l]));
            y[l] = from_float<T>(h);
        }
    }
}

template <class T> __global__ void linrec_ref_backward_kernel(const LinrecBackwardParams<T> p) {
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    const std::int64_t next = p.reverse ? -1 : 1;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < p.sequences;
         r += threads) {
        const T *dy = p.dy.row(r), *c = p.c.row(r), *y = p.y.row(r);
        T *dx = p.dx.row(r), *dc = p.dc.row(r);
        float carry = 0.0f;
        for (std::int64_t step = 0; step < p.length; ++step) {
            const std::int64_t l = p.reverse ? step : p.length - 1 - step;
            const std::int64_t successor = l + next, predecessor = l - next;
            const float c_after = successor >= 0 && successor < p.length ? to_float(c[successor]) : 0.0f;
            carry = fmaf(c_after, carry, to_float(dy[l]));
            dx[l] = from_float<T>(carry);
            const float y_before =
                predecessor >= 0 && predecessor < p.length ? to_float(y[predecessor]) : 0.0f;
            dc[l] = from_float<T>(y_before * carry);
        }
    }
}

} // namespace flashrnn::cuda::scan

// A tensor of the scans as the kernels see it: a typed base pointer and the row stride, from the
// checked row tensor view of the host API (flashrnn/scan/rows.hpp).
#pragma once

#include <cstdint>

#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/rows.hpp"

namespace flashrnn::cuda::scan {

template <class T> struct RowPointer {
    T* data;
    std::int64_t row_stride;
    __device__ __forceinline__ T* row(std::int64_t r) const { return data + r * row_stride; }
};

template <class T> RowPointer<const T> rows_of(const ConstTensorView& rows) {
    return {static_cast<const T*>(rows.data), row_stride(rows)};
}
template <class T> RowPointer<T> rows_of(const TensorView& rows) {
    return {static_cast<T*>(rows.data), row_stride(rows)};
}

} // namespace flashrnn::cuda::scan

// A tensor of the scans as the kernels see it: a typed base pointer and the row stride (scan.hpp).
#pragma once

#include <cstdint>

#include "flashrnn/scan.hpp"

namespace flashrnn::cuda::scan {

template <class T> struct RowPointer {
    T* data;
    std::int64_t row_stride;
    __device__ __forceinline__ T* row(std::int64_t r) const { return data + r * row_stride; }
};

template <class T> RowPointer<const T> rows_of(ConstRows rows) {
    return {static_cast<const T*>(rows.data), rows.row_stride};
}
template <class T> RowPointer<T> rows_of(Rows rows) {
    return {static_cast<T*>(rows.data), rows.row_stride};
}

} // namespace flashrnn::cuda::scan

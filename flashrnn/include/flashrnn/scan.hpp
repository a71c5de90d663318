// The data of FlashRNN's scans (linrec, RG-LRU): many independent sequences, each one row of a
// 2-D tensor. Row r of a tensor starts at element r * row_stride of its buffer and holds `length`
// contiguous elements (the time axis is the contiguous one), so a view of a wider tensor (row_stride
// > length) is read and written in place.
#pragma once

#include <cstdint>
#include <string_view>

#include "flashrnn/dtype.hpp"

namespace flashrnn {

// The longest sequence a scan accepts (positions are 32-bit signed integers in the public contract).
inline constexpr std::int64_t kMaxScanLength = 2147483647;

struct ScanShape {
    std::int64_t sequences = 0; // rows, at least 1
    std::int64_t length = 0;    // elements per row, 1 .. kMaxScanLength
};

// One tensor of a scan: its device buffer and the distance between the starts of consecutive rows,
// in elements (>= length).
template <class Pointer> struct RowsOf {
    Pointer data = nullptr;
    std::int64_t row_stride = 0;
};
using ConstRows = RowsOf<const void*>;
using Rows = RowsOf<void*>;

// Dense rows: row_stride == length.
inline ConstRows dense(const void* data, const ScanShape& shape) {
    return {data, shape.length};
}
inline Rows dense(void* data, const ScanShape& shape) {
    return {data, shape.length};
}
// An output seen as an input (for the checks shared by both).
inline ConstRows as_const(Rows rows) {
    return {rows.data, rows.row_stride};
}

// Argument checks of the scans' host API, shared by every kernel (and testable without a GPU). Each
// throws std::invalid_argument naming the call, the tensor and the bad value:
//  - check_scan_shape: no sequences, a length of 0 or above kMaxScanLength;
//  - check_rows: a null pointer, a row stride below the length, a pointer not aligned to the element
//    size, or a last row that ends beyond 2^63 bytes.
void check_scan_shape(std::string_view call, const ScanShape& shape);
void check_rows(std::string_view call, std::string_view tensor, const void* data, std::int64_t row_stride,
                const ScanShape& shape, DType dtype);
inline void check_rows(std::string_view call, std::string_view tensor, ConstRows rows, const ScanShape& shape,
                       DType dtype) {
    check_rows(call, tensor, rows.data, rows.row_stride, shape, dtype);
}

// Whether every row of a tensor starts on a multiple of `bytes` (vectorised access needs it; the
// kernels fall back to element-wise access otherwise).
bool rows_aligned(const void* data, std::int64_t row_stride, DType dtype, int bytes);

} // namespace flashrnn

// The device tensors of FlashRNN's scans (linrec, RG-LRU): many independent sequences, each one row
// of a 2-D tensor view [sequences, length] with the time axis contiguous. Row r starts at element
// r * row_stride of the view's buffer, so a view of a wider tensor (strides {row_stride, 1},
// row_stride > length) is read and written in place; empty strides mean dense rows
// (row_stride == length).
//
//   ConstTensorView x{ptr, DType::bf16, {S, L}};               // dense
//   ConstTensorView x{ptr, DType::bf16, {S, L}, {stride, 1}};  // every row `stride` elements apart
#pragma once

#include <cstdint>
#include <string_view>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/shape.hpp"

namespace flashrnn {

// The requirement of a scan's row tensor: `dtype`, sizes [sequences, L] (the first dimension named
// `sequences_name`: "sequences" for linrec, "B*R" for the RG-LRU), the time axis contiguous and any
// row stride of at least L. The requirement refers to `sequences_name`, which must outlive it (a
// literal does).
TensorRequirement rows_requirement(DType dtype, const ScanShape& shape,
                                   std::string_view sequences_name = "sequences");

// The argument check of the scans' row tensors, shared by every kernel (and testable without a GPU):
// check_tensor against rows_requirement. Throws ShapeError naming the call and the tensor for a
// missing (null) tensor, a dtype or sizes other than the requirement's, an inner stride other than 1,
// a row stride below the length, a pointer not aligned to the element size, or a last row that ends
// beyond 2^63 bytes.
void check_rows(std::string_view call, std::string_view tensor, const ConstTensorView& rows, DType dtype,
                const ScanShape& shape, std::string_view sequences_name = "sequences");

// The distance between the starts of consecutive rows of a row tensor, in elements: its first stride,
// or the length of a row when its strides are empty (dense).
std::int64_t row_stride(const ConstTensorView& rows);

// Whether every row of a row tensor starts on a multiple of `bytes` (vectorised access needs it; the
// kernels fall back to element-wise access otherwise).
bool rows_aligned(const ConstTensorView& rows, int bytes);

} // namespace flashrnn

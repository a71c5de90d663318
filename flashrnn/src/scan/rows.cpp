#include "flashrnn/scan/rows.hpp"

#include <cstdint>
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor_size.hpp"
#include "flashrnn/scan/shape.hpp"

namespace flashrnn {

namespace {

std::string prefix(std::string_view call) {
    return "flashrnn::" + std::string(call) + ": ";
}

} // namespace

void check_scan_shape(std::string_view call, const ScanShape& shape) {
    if (shape.sequences < 1)
        throw ShapeError(prefix(call) + "the number of sequences must be at least 1, got " +
                         std::to_string(shape.sequences));
    if (shape.length < 1 || shape.length > kMaxScanLength)
        throw ShapeError(prefix(call) + "the sequence length must be in [1, " +
                         std::to_string(kMaxScanLength) + "], got " + std::to_string(shape.length));
    if (!fits_tensor({shape.sequences, shape.length}))
        throw ShapeError(prefix(call) + "the rows would exceed " + std::to_string(kMaxTensorElements) +
                         " elements (2^60 - 1), got " + std::to_string(shape.sequences) +
                         " sequences of length " + std::to_string(shape.length));
}

void check_rglru_shape(std::string_view call, const RglruShape& shape) {
    if (shape.batch < 1 || shape.channels < 1)
        throw ShapeError(prefix(call) + "batch and channels must be at least 1, got " +
                         std::to_string(shape.batch) + " and " + std::to_string(shape.channels));
    if (!fits_tensor({shape.batch, shape.channels})) // before scan() multiplies them
        throw ShapeError(prefix(call) + "batch x channels would exceed " +
                         std::to_string(kMaxTensorElements) + ", got " + std::to_string(shape.batch) + " x " +
                         std::to_string(shape.channels));
    check_scan_shape(call, shape.scan());
}

TensorRequirement rows_requirement(DType dtype, const ScanShape& shape, std::string_view sequences_name) {
    return {
        dtype, {{sequences_name, shape.sequences}, {"L", shape.length}}, TensorRequirement::Strides::rows};
}

void check_rows(std::string_view call, std::string_view tensor, const ConstTensorView& rows, DType dtype,
                const ScanShape& shape, std::string_view sequences_name) {
    check_tensor(call, tensor, rows, rows_requirement(dtype, shape, sequences_name));
}

std::int64_t row_stride(const ConstTensorView& rows) {
    return rows.sizes.rank() == 0 ? 0 : rows.strides_or_dense()[0];
}

bool rows_aligned(const ConstTensorView& rows, int bytes) {
    const auto address = reinterpret_cast<std::uintptr_t>(rows.data);
    const auto stride_bytes =
        static_cast<std::uint64_t>(row_stride(rows)) * static_cast<std::uint64_t>(bytes_of(rows.dtype));
    return address % static_cast<std::uint64_t>(bytes) == 0 &&
           stride_bytes % static_cast<std::uint64_t>(bytes) == 0;
}

} // namespace flashrnn

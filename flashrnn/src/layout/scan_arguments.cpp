#include <cstdint>
#include <stdexcept>
#include <string>

#include "flashrnn/rglru.hpp"
#include "flashrnn/scan.hpp"

namespace flashrnn {

namespace {

std::string prefix(std::string_view call) {
    return "flashrnn::" + std::string(call) + ": ";
}

} // namespace

void check_scan_shape(std::string_view call, const ScanShape& shape) {
    if (shape.sequences < 1)
        throw std::invalid_argument(prefix(call) + "the number of sequences must be at least 1, got " +
                                    std::to_string(shape.sequences));
    if (shape.length < 1 || shape.length > kMaxScanLength)
        throw std::invalid_argument(prefix(call) + "the sequence length must be in [1, " +
                                    std::to_string(kMaxScanLength) + "], got " +
                                    std::to_string(shape.length));
}

void check_rglru_shape(std::string_view call, const RglruShape& shape) {
    if (shape.batch < 1 || shape.channels < 1)
        throw std::invalid_argument(prefix(call) + "batch and channels must be at least 1, got " +
                                    std::to_string(shape.batch) + " and " + std::to_string(shape.channels));
    check_scan_shape(call, shape.scan());
}

void check_rows(std::string_view call, std::string_view tensor, const void* data, std::int64_t row_stride,
                const ScanShape& shape, DType dtype) {
    const std::string name(tensor);
    if (data == nullptr) throw std::invalid_argument(prefix(call) + name + " is a null pointer");
    if (row_stride < shape.length)
        throw std::invalid_argument(prefix(call) + name + " has row stride " + std::to_string(row_stride) +
                                    ", smaller than the sequence length " + std::to_string(shape.length));
    const auto bytes = static_cast<std::uint64_t>(bytes_of(dtype));
    if (reinterpret_cast<std::uintptr_t>(data) % bytes != 0)
        throw std::invalid_argument(prefix(call) + name + " is not aligned to its element size (" +
                                    std::to_string(bytes) + " bytes)");
    // The last element's byte offset must fit a signed 64-bit integer: (sequences - 1) * row_stride +
    // length <= INT64_MAX / bytes, tested without overflowing.
    const std::int64_t max_elements = INT64_MAX / static_cast<std::int64_t>(bytes);
    if (shape.sequences - 1 > (max_elements - shape.length) / row_stride)
        throw std::invalid_argument(prefix(call) + name + ": " + std::to_string(shape.sequences) +
                                    " rows of stride " + std::to_string(row_stride) + " exceed 2^63 bytes");
}

bool rows_aligned(const void* data, std::int64_t row_stride, DType dtype, int bytes) {
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    const auto stride_bytes =
        static_cast<std::uint64_t>(row_stride) * static_cast<std::uint64_t>(bytes_of(dtype));
    return address % static_cast<std::uint64_t>(bytes) == 0 &&
           stride_bytes % static_cast<std::uint64_t>(bytes) == 0;
}

} // namespace flashrnn

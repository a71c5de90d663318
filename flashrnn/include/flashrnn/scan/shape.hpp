// The sizes of FlashRNN's scans (linrec, RG-LRU): many independent sequences, each one row of a 2-D
// tensor with the time axis contiguous. Neutral: the float64 reference and the GPU API both use it.
#pragma once

#include <cstdint>
#include <string_view>

namespace flashrnn {

// The longest sequence a scan accepts (positions are 32-bit signed integers in the public contract).
inline constexpr std::int64_t kMaxScanLength = 2147483647;

struct ScanShape {
    std::int64_t sequences = 0; // rows, at least 1
    std::int64_t length = 0;    // elements per row, 1 .. kMaxScanLength
};

// The RG-LRU's sizes: B*R sequences (rows) of L steps, row s belonging to channel s % channels.
struct RglruShape {
    std::int64_t batch = 0;
    std::int64_t channels = 0; // R: the width of Lambda
    std::int64_t length = 0;   // L: time steps
    ScanShape scan() const { return {batch * channels, length}; }
};

// Throw ShapeError naming `call`: no sequences, a length of 0 or above kMaxScanLength, rows of more
// than kMaxTensorElements in all (core/tensor_size.hpp); for the RG-LRU also no batch or no channels. Shared
// by the kernels and the CPU references.
void check_scan_shape(std::string_view call, const ScanShape& shape);
void check_rglru_shape(std::string_view call, const RglruShape& shape);

} // namespace flashrnn

// The scan core with 2x2 block elements (linrec2x2_client.cuh): h_l = A_l h_{l-1} + b_l over many
// independent sequences of 2-vectors, h_{-1} = 0, fp32, dense rows (row s of A holds 4 L floats, row-major
// matrices; b and h 2 L floats). Internal: the GPU tests run it to show that the scan core takes the
// Newton solvers' element type without a copy of its code; one configuration (4 elements x 128
// threads), no launch model yet. Bad arguments throw ShapeError.
#pragma once

#include "flashrnn/core/stream.hpp"
#include "flashrnn/scan/shape.hpp"

namespace flashrnn::cuda::scan {

// `a` 16-byte aligned, `b` and `h` 8-byte aligned; `h` must not overlap the inputs.
void linrec2x2_forward(const ScanShape& shape, const float* a, const float* b, float* h, Stream stream);

} // namespace flashrnn::cuda::scan

// float64 CPU references of the scans (linrec, RG-LRU): the oracle of the GPU tests. Dense rows:
// element (s, l) at s * length + l. Sizes are checked; a mismatch throws ShapeError.
#pragma once

#include <span>
#include <vector>

#include "flashrnn/scan/shape.hpp"

namespace flashrnn::reference {

// y_l = c_l y_{l-1} + x_l (reverse: from the end), sequentially.
std::vector<double> linrec_forward(std::span<const double> x, std::span<const double> c,
                                   const ScanShape& shape, bool reverse);

struct LinrecGradients {
    std::vector<double> dx, dc;
};
// dx = the reverse-direction recurrence of dy with the coefficients shifted by one; dc_l = y_{l-1} dx_l.
LinrecGradients linrec_backward(std::span<const double> dy, std::span<const double> c,
                                std::span<const double> y, const ScanShape& shape, bool reverse);

struct RglruForwardResult {
    std::vector<double> h, h_last;
};
// h0 may be empty (zero initial state).
RglruForwardResult rglru_forward(const RglruShape& shape, std::span<const double> x,
                                 std::span<const double> gate_a, std::span<const double> gate_x,
                                 std::span<const double> lambda, std::span<const double> h0);

struct RglruGradients {
    std::vector<double> dx, d_gate_a, d_gate_x, d_lambda, dh0;
};
// h is the forward's output; h0 and dh_last may be empty (zero).
RglruGradients rglru_backward(const RglruShape& shape, std::span<const double> x,
                              std::span<const double> gate_a, std::span<const double> gate_x,
                              std::span<const double> lambda, std::span<const double> h0,
                              std::span<const double> h, std::span<const double> dh,
                              std::span<const double> dh_last);

} // namespace flashrnn::reference

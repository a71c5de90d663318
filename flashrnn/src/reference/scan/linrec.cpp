#include <cstddef>
#include <stdexcept>
#include <string>

#include "flashrnn/scan/reference.hpp"
#include "reference/scan/sizes.hpp"

namespace flashrnn::reference {

std::vector<double> linrec_forward(std::span<const double> x, std::span<const double> c,
                                   const ScanShape& shape, bool reverse) {
    const char* call = "reference::linrec_forward";
    check_scan_shape(call, shape);
    check_size(call, "x", x.size(), shape.sequences * shape.length);
    check_size(call, "c", c.size(), shape.sequences * shape.length);
    std::vector<double> y(x.size());
    const auto L = static_cast<std::size_t>(shape.length);
    for (std::size_t s = 0; s < static_cast<std::size_t>(shape.sequences); ++s) {
        double h = 0;
        for (std::size_t step = 0; step < L; ++step) {
            const std::size_t i = s * L + (reverse ? L - 1 - step : step);
            h = c[i] * h + x[i];
            y[i] = h;
        }
    }
    return y;
}

LinrecGradients linrec_backward(std::span<const double> dy, std::span<const double> c,
                                std::span<const double> y, const ScanShape& shape, bool reverse) {
    const char* call = "reference::linrec_backward";
    check_scan_shape(call, shape);
    for (auto [name, size] : {std::pair{"dy", dy.size()}, std::pair{"c", c.size()}, std::pair{"y", y.size()}})
        check_size(call, name, size, shape.sequences * shape.length);
    LinrecGradients g{std::vector<double>(dy.size()), std::vector<double>(dy.size())};
    const auto L = static_cast<std::ptrdiff_t>(shape.length);
    // The forward's successor of position l is l + 1 (reverse: l - 1): the gradient runs the other way.
    const std::ptrdiff_t next = reverse ? -1 : 1;
    for (std::ptrdiff_t s = 0; s < static_cast<std::ptrdiff_t>(shape.sequences); ++s) {
        const std::size_t row = static_cast<std::size_t>(s * L);
        double carry = 0;
        for (std::ptrdiff_t step = 0; step < L; ++step) {
            const std::ptrdiff_t l = reverse ? step : L - 1 - step;
            const std::ptrdiff_t successor = l + next, predecessor = l - next;
            const double c_next = successor >= 0 && successor < L ? c[row + successor] : 0.0;
            carry = dy[row + l] + c_next * carry;
            g.dx[row + l] = carry;
            const double y_prev = predecessor >= 0 && predecessor < L ? y[row + predecessor] : 0.0;
            g.dc[row + l] = y_prev * carry;
        }
    }
    return g;
}

} // namespace flashrnn::reference

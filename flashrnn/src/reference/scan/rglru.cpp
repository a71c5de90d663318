#include <cstddef>

#include "flashrnn/scan/reference.hpp"
#include "reference/scan/sizes.hpp"
#include "scan/rglru_math.hpp"

namespace flashrnn::reference {

namespace {

void check_rglru(const char* call, const RglruShape& shape, std::span<const double> x,
                 std::span<const double> gate_a, std::span<const double> gate_x,
                 std::span<const double> lambda, std::span<const double> h0) {
    check_rglru_shape(call, shape);
    const std::int64_t n = shape.batch * shape.channels * shape.length;
    check_size(call, "x", x.size(), n);
    check_size(call, "gate_a", gate_a.size(), n);
    check_size(call, "gate_x", gate_x.size(), n);
    check_size(call, "lambda", lambda.size(), shape.channels);
    if (!h0.empty()) check_size(call, "h0", h0.size(), shape.batch * shape.channels);
}

} // namespace

RglruForwardResult rglru_forward(const RglruShape& shape, std::span<const double> x,
                                 std::span<const double> gate_a, std::span<const double> gate_x,
                                 std::span<const double> lambda, std::span<const double> h0) {
    check_rglru("reference::rglru_forward", shape, x, gate_a, gate_x, lambda, h0);
    const auto rows = static_cast<std::size_t>(shape.batch * shape.channels);
    const auto L = static_cast<std::size_t>(shape.length);
    RglruForwardResult out{std::vector<double>(x.size()), std::vector<double>(rows)};
    for (std::size_t s = 0; s < rows; ++s) {
        const double sp = rglru::softplus(lambda[s % static_cast<std::size_t>(shape.channels)]);
        double h = h0.empty() ? 0.0 : h0[s];
        for (std::size_t t = 0; t < L; ++t) {
            const std::size_t i = s * L + t;
            const auto step = rglru::step(x[i], gate_a[i], gate_x[i], sp);
            h = step.a * h + step.b;
            out.h[i] = h;
        }
        out.h_last[s] = h;
    }
    return out;
}

RglruGradients rglru_backward(const RglruShape& shape, std::span<const double> x,
                              std::span<const double> gate_a, std::span<const double> gate_x,
                              std::span<const double> lambda, std::span<const double> h0,
                              std::span<const double> h, std::span<const double> dh,
                              std::span<const double> dh_last) {
    const char* call = "reference::rglru_backward";
    check_rglru(call, shape, x, gate_a, gate_x, lambda, h0);
    check_size(call, "h", h.size(), static_cast<std::int64_t>(x.size()));
    check_size(call, "dh", dh.size(), static_cast<std::int64_t>(x.size()));
    const auto rows = static_cast<std::size_t>(shape.batch * shape.channels);
    if (!dh_last.empty()) check_size(call, "dh_last", dh_last.size(), static_cast<std::int64_t>(rows));
    const auto L = static_cast<std::size_t>(shape.length);
    const auto R = static_cast<std::size_t>(shape.channels);
    RglruGradients g{std::vector<double>(x.size()), std::vector<double>(x.size()),
                     std::vector<double>(x.size()), std::vector<double>(R), std::vector<double>(rows)};
    for (std::size_t s = 0; s < rows; ++s) {
        const double lam = lambda[s % R];
        const double sp = rglru::softplus(lam);
        double carry = dh_last.empty() ? 0.0 : dh_last[s]; // dL/dh_t from the steps after t
        double d_lambda = 0;
        for (std::size_t step = 0; step < L; ++step) {
            const std::size_t t = L - 1 - step, i = s * L + t;
            const auto fwd = rglru::step(x[i], gate_a[i], gate_x[i], sp);
            const double grad_h = dh[i] + carry;
            const double h_prev = t > 0 ? h[i - 1] : (h0.empty() ? 0.0 : h0[s]);
            const auto d = rglru::step_backward(fwd, x[i], grad_h, h_prev, sp);
            g.dx[i] = d.dx;
            g.d_gate_a[i] = d.d_gate_a;
            g.d_gate_x[i] = d.d_gate_x;
            d_lambda += d.d_lambda_over_sigmoid;
            carry = fwd.a * grad_h;
        }
        g.d_lambda[s % R] += d_lambda * cells::sigmoid(lam);
        g.dh0[s] = carry;
    }
    return g;
}

} // namespace flashrnn::reference

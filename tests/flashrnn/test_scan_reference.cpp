// The float64 references of the scans: linrec against hand-computed values and its backward against
// finite differences; RG-LRU against a direct transcription of Griffin's equations and every gradient
// against central differences; the clipped derivative of sqrt near a = 1.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/scan/reference.hpp"
#include "scan/rglru_math.hpp"
#include "test_support.hpp"

using namespace flashrnn;
using flashrnn::testing::compare_with_finite_differences;
using flashrnn::testing::describe;
using flashrnn::testing::uniform;

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

} // namespace

TEST_CASE("linrec reference: forward and reverse by hand") {
    const std::vector<double> x{1, 2, 3, 4, 5, 6}, c{2, 3, -1, 0.5, 1, 2};
    const ScanShape shape{2, 3};
    const auto y = reference::linrec_forward(x, c, shape, false);
    // row 0: 1, 3*1+2 = 5, -5+3 = -2; row 1: 4, 4+5 = 9, 18+6 = 24
    CHECK(y == std::vector<double>{1, 5, -2, 4, 9, 24});
    const auto yr = reference::linrec_forward(x, c, shape, true);
    // row 0 from the end: 3, 3*3+2 = 11, 2*11+1 = 23; row 1: 6, 6+5 = 11, 5.5+4 = 9.5
    CHECK(yr == std::vector<double>{23, 11, 3, 9.5, 11, 6});
}

TEST_CASE("linrec reference: backward equals finite differences, both directions") {
    for (bool reverse : {false, true}) {
        CAPTURE(reverse);
        std::mt19937_64 rng(7);
        const ScanShape shape{3, 9};
        auto x = uniform(27, -1, 1, rng), c = uniform(27, -1.2, 1.2, rng);
        const auto dy = uniform(27, -1, 1, rng);
        const auto y = reference::linrec_forward(x, c, shape, reverse);
        const auto g = reference::linrec_backward(dy, c, y, shape, reverse);
        auto loss = [&] { return dot(dy, reference::linrec_forward(x, c, shape, reverse)); };
        const auto mx = compare_with_finite_differences(x, g.dx, loss, 1e-6, 1e-8, 1e-7);
        CHECK_MESSAGE(mx.worst_excess <= 0, describe(mx));
        const auto mc = compare_with_finite_differences(c, g.dc, loss, 1e-6, 1e-8, 1e-7);
        CHECK_MESSAGE(mc.worst_excess <= 0, describe(mc));
    }
}

TEST_CASE("linrec reference: size mismatches are refused") {
    const std::vector<double> x(5), c(6);
    CHECK_THROWS_WITH_AS(reference::linrec_forward(x, c, {2, 3}, false),
                         "flashrnn::reference::linrec_forward: x has 5 values, expected 6", ShapeError);
    CHECK_THROWS_AS(reference::linrec_forward(c, c, {0, 3}, false), ShapeError);
}

TEST_CASE("RG-LRU reference: Griffin's equations step by step") {
    const RglruShape shape{1, 2, 3};
    const std::vector<double> x{0.5, -1, 2, 1, 0.25, -0.5}, ga{0.1, -2, 1, 0.3, 0.7, -0.4},
        gx{1, 0.5, -1, -0.2, 0.9, 0.1}, lambda{0.4, -1.5}, h0{0.3, -0.7};
    const auto out = reference::rglru_forward(shape, x, ga, gx, lambda, h0);
    for (int s = 0; s < 2; ++s) {
        double h = h0[s];
        const double sp = std::log(1 + std::exp(lambda[s]));
        for (int t = 0; t < 3; ++t) {
            const int i = s * 3 + t;
            const double r = 1 / (1 + std::exp(-ga[i])), in = 1 / (1 + std::exp(-gx[i]));
            const double a = std::pow(std::exp(-sp), 8 * r); // a = (e^-softplus)^(c r)
            h = a * h + std::sqrt(1 - a * a) * in * x[i];
            CHECK(out.h[i] == doctest::Approx(h).epsilon(1e-13));
        }
        CHECK(out.h_last[s] == out.h[s * 3 + 2]);
    }
}

TEST_CASE("RG-LRU reference: every gradient equals central differences") {
    for (bool with_initial_state : {false, true}) {
        CAPTURE(with_initial_state);
        std::mt19937_64 rng(11);
        const RglruShape shape{2, 3, 7};
        const std::size_t n = 42, rows = 6;
        auto x = uniform(n, -1, 1, rng), ga = uniform(n, -2, 2, rng), gx = uniform(n, -2, 2, rng);
        auto lambda = uniform(3, -1, 2, rng);
        auto h0 = with_initial_state ? uniform(rows, -1, 1, rng) : std::vector<double>{};
        const auto dh = uniform(n, -1, 1, rng), dh_last = uniform(rows, -1, 1, rng);
        auto loss = [&] {
            const auto out = reference::rglru_forward(shape, x, ga, gx, lambda, h0);
            return dot(dh, out.h) + dot(dh_last, out.h_last);
        };
        const auto fwd = reference::rglru_forward(shape, x, ga, gx, lambda, h0);
        const auto g = reference::rglru_backward(shape, x, ga, gx, lambda, h0, fwd.h, dh, dh_last);
        for (auto [label, param, grad] :
             {std::tuple{"x", &x, &g.dx}, std::tuple{"gate_a", &ga, &g.d_gate_a},
              std::tuple{"gate_x", &gx, &g.d_gate_x}, std::tuple{"lambda", &lambda, &g.d_lambda}}) {
            const char* name = label; // Clang 14 cannot capture a structured binding (CAPTURE)
            CAPTURE(name);
            const auto m = compare_with_finite_differences(*param, *grad, loss, 1e-6, 1e-8, 1e-6);
            CHECK_MESSAGE(m.worst_excess <= 0, describe(m));
        }
        if (with_initial_state) {
            const auto m = compare_with_finite_differences(h0, g.dh0, loss, 1e-6, 1e-8, 1e-6);
            CHECK_MESSAGE(m.worst_excess <= 0, describe(m));
        }
    }
}

TEST_CASE("RG-LRU: the derivative of sqrt(1 - a^2) is clipped near a = 1") {
    // softplus(-40) ~ 4e-18: a = 1 - 8 r 4e-18 rounds to 1, sqrt(1 - a^2) ~ 0.
    const auto s = rglru::step(1.0, 0.0, 0.0, rglru::softplus(-40.0));
    CHECK(s.multiplier < 1e-7);
    const auto d = rglru::step_backward(s, 1.0, 1.0, 0.0, rglru::softplus(-40.0));
    CHECK(std::isfinite(d.d_gate_a));
    CHECK(std::isfinite(d.d_lambda_over_sigmoid));
    // d/da [sqrt(1 - a^2) i x] with the clip: -2 a i x * 1000; i = 0.5, x = 1, g = 1, h_prev = 0.
    const double d_a = -2 * s.a * 0.5 * 1000;
    CHECK(d.d_lambda_over_sigmoid == doctest::Approx(d_a * s.a * -8 * s.r));
}

// Clipping and cutting of the gradient through R (paper section 4.1), checked against a BPTT of the
// Elman cell written out here, and on the LSTM where the cell state keeps carrying gradient.
#include <cmath>

#include "flashrnn/core/error.hpp"
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

// Plain-loop Elman BPTT; `through_r` maps each element of R^T dg before it reaches h_{t-1}.
struct ElmanGradients {
    std::vector<double> d_gate_inputs, d_initial;
    double largest_through_r = 0;
};

template <class Map>
ElmanGradients elman_bptt(const RandomProblem& p, const reference::ForwardResult& fwd,
                          const UpstreamGradients& up, Map through_r) {
    const auto T = p.shape.time_steps, B = p.shape.batch, NH = p.shape.heads, DH = p.shape.head_dim;
    const auto unit = [&](std::int64_t b, std::int64_t h, std::int64_t d) { return (b * NH + h) * DH + d; };
    const std::int64_t slice = B * NH * DH;
    ElmanGradients out;
    out.d_gate_inputs.assign(static_cast<std::size_t>(T * slice), 0.0);
    std::vector<double> carry(static_cast<std::size_t>(slice), 0.0);
    for (std::int64_t t = T; t >= 1; --t) {
        std::vector<double> dg(carry.size());
        for (std::int64_t k = 0; k < slice; ++k) {
            double dh = carry[k] + up.d_states[t * slice + k] + (t == T ? up.d_last_state[k] : 0.0);
            const double h = fwd.states.values[t * slice + k];
            dg[k] = (1 - h * h) * dh;
            out.d_gate_inputs[(t - 1) * slice + k] = dg[k];
        }
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < NH; ++h)
                for (std::int64_t j = 0; j < DH; ++j) {
                    double sum = 0; // (R[h]^T dg)[j] = sum_i R[h, i, j] dg[i]
                    for (std::int64_t i = 0; i < DH; ++i)
                        sum += p.recurrent_weights[(h * DH + i) * DH + j] * dg[unit(b, h, i)];
                    out.largest_through_r = std::max(out.largest_through_r, std::abs(sum));
                    carry[unit(b, h, j)] = through_r(sum);
                }
    }
    out.d_initial.resize(carry.size());
    for (std::int64_t k = 0; k < slice; ++k)
        out.d_initial[k] = carry[k] + up.d_states[k];
    return out;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

constexpr double tolerance = 1e-12;

} // namespace

TEST_CASE("clipping clamps each element of R^T dg to [-clip, clip]") {
    RandomProblem problem(Cell::elman, ProblemShape{6, 2, 2, 3}, 41);
    for (double& w : problem.recurrent_weights)
        w *= 3; // large enough for the clip to bind
    const reference::ForwardResult fwd = problem.forward();
    const UpstreamGradients up = random_upstream(problem, 42, false);

    const ElmanGradients unclipped = elman_bptt(problem, fwd, up, [](double x) { return x; });
    const double clip = 0.3 * unclipped.largest_through_r;
    const ElmanGradients expected =
        elman_bptt(problem, fwd, up, [clip](double x) { return std::clamp(x, -clip, clip); });
    const reference::BackwardResult clipped =
        run_backward(problem, fwd, up, RecurrentGradient::clipped(clip));

    CHECK(max_abs_difference(clipped.d_gate_inputs.values, expected.d_gate_inputs) <= tolerance);
    CHECK(max_abs_difference(clipped.d_initial_states.values, expected.d_initial) <= tolerance);
    // ... and the clip changed the result.
    CHECK(max_abs_difference(clipped.d_gate_inputs.values, unclipped.d_gate_inputs) > 1e-3);
    CHECK(max_abs_difference(run_backward(problem, fwd, up).d_gate_inputs.values, unclipped.d_gate_inputs) <=
          tolerance);
}

TEST_CASE("a clip that never binds is exact BPTT") {
    RandomProblem problem(Cell::lstm, ProblemShape{5, 2, 2, 3}, 43);
    const reference::ForwardResult fwd = problem.forward();
    const UpstreamGradients up = random_upstream(problem, 44, false);
    const reference::BackwardResult full = run_backward(problem, fwd, up);
    const reference::BackwardResult clipped =
        run_backward(problem, fwd, up, RecurrentGradient::clipped(1e300));
    CHECK(clipped.d_gate_inputs.values == full.d_gate_inputs.values);
    CHECK(clipped.d_recurrent_weights.values == full.d_recurrent_weights.values);
    CHECK(clipped.d_bias.values == full.d_bias.values);
    CHECK(clipped.d_initial_states.values == full.d_initial_states.values);
}

TEST_CASE("cutting drops R^T dg but keeps the gradients of Wx, R and b local to each step") {
    RandomProblem problem(Cell::elman, ProblemShape{4, 2, 2, 2}, 45);
    const reference::ForwardResult fwd = problem.forward();
    const UpstreamGradients up = random_upstream(problem, 46, false);
    const ElmanGradients expected = elman_bptt(problem, fwd, up, [](double) { return 0.0; });
    const reference::BackwardResult cut = run_backward(problem, fwd, up, RecurrentGradient::cut());

    // Elman with a cut: dWx_t = (1 - h_t^2) * dS_t and dh_0 = dS_0.
    CHECK(max_abs_difference(cut.d_gate_inputs.values, expected.d_gate_inputs) <= tolerance);
    CHECK(max_abs_difference(cut.d_initial_states.values, expected.d_initial) <= tolerance);

    // dR = sum_t dg_t h_{t-1}^T and db = sum_t dg_t, from the local gate gradients.
    const std::int64_t DH = 2, NH = 2, B = 2, slice = B * NH * DH;
    std::vector<double> d_r(static_cast<std::size_t>(NH * DH * DH), 0.0),
        d_b(static_cast<std::size_t>(NH * DH), 0.0);
    for (std::int64_t t = 0; t < 4; ++t)
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < NH; ++h)
                for (std::int64_t i = 0; i < DH; ++i) {
                    const double dg = expected.d_gate_inputs[t * slice + (b * NH + h) * DH + i];
                    d_b[h * DH + i] += dg;
                    for (std::int64_t j = 0; j < DH; ++j)
                        d_r[(h * DH + i) * DH + j] +=
                            dg * fwd.states.values[t * slice + (b * NH + h) * DH + j];
                }
    CHECK(max_abs_difference(cut.d_recurrent_weights.values, d_r) <= tolerance);
    CHECK(max_abs_difference(cut.d_bias.values, d_b) <= tolerance);
}

TEST_CASE("cutting keeps the LSTM cell-state path") {
    const ProblemShape shape{4, 1, 1, 3};
    RandomProblem problem(Cell::lstm, shape, 47);
    const reference::ForwardResult fwd = problem.forward();
    UpstreamGradients up = random_upstream(problem, 48, false);
    std::fill(up.d_states.begin(), up.d_states.end(), 0.0); // only the last h carries a loss
    std::fill(up.d_last_state.begin() + 3, up.d_last_state.end(), 0.0);
    const reference::BackwardResult cut = run_backward(problem, fwd, up, RecurrentGradient::cut());
    const reference::BackwardResult full = run_backward(problem, fwd, up);

    const std::vector<double>& d0 = cut.d_initial_states.values; // [h0 (3), c0 (3)]
    for (int d = 0; d < 3; ++d) {
        CHECK(d0[d] == 0.0);                                     // no path from h_0 without R
        CHECK(std::abs(d0[3 + d]) > 1e-6);                       // c carries it back
        CHECK(d0[3 + d] != full.d_initial_states.values[3 + d]); // but not the part through R
    }
}

TEST_CASE("a clip value must be finite and positive") {
    RandomProblem problem(Cell::elman, ProblemShape{1, 1, 1, 1}, 49);
    const reference::ForwardResult fwd = problem.forward();
    const UpstreamGradients up = random_upstream(problem, 50, false);
    CHECK_THROWS_WITH_AS(run_backward(problem, fwd, up, RecurrentGradient::clipped(0.0)),
                         "flashrnn: the recurrent gradient clip value must be finite and > 0, got 0.000000",
                         ShapeError);
    CHECK_THROWS_AS(run_backward(problem, fwd, up, RecurrentGradient::clipped(std::nan(""))), ShapeError);
}

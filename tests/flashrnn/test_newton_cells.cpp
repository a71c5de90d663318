// The diagonal cells of the Newton solvers (FlashGRU, FlashLSTM) on their own: the Jacobian of every
// state and the gradients of the inputs, the parameters and the previous states against central
// finite differences of the step function in float64, the float instantiation against double, and
// the registry.
#include <algorithm>
#include <array>
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/cells.hpp"
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

constexpr double fd_step = 1e-6;
constexpr double abs_tol = 1e-8; // values and derivatives are O(1)

// One random evaluation point of a cell: input projections, parameters (some beyond |a| = 1, where
// a trained cell may go), previous states, upstream gradients.
template <class C> struct Point {
    std::vector<double> x, p, s_prev, ds_new;

    explicit Point(std::mt19937_64& rng)
        : x(uniform(C::num_gates, -2.0, 2.0, rng)), p(uniform(C::num_parameters, -1.5, 1.5, rng)),
          s_prev(uniform(C::num_states, -1.0, 1.0, rng)), ds_new(uniform(C::num_states, -1.0, 1.0, rng)) {}

    std::array<double, C::num_states> forward() const {
        std::array<double, C::num_states> s{};
        C::forward(x.data(), p.data(), s_prev.data(), s.data());
        return s;
    }
};

template <class C> void check_jacobian(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 100; ++trial) {
        Point<C> point(rng);
        std::array<double, C::num_states> s_new{};
        std::array<double, C::num_states * C::num_states> jacobian{};
        C::step(point.x.data(), point.p.data(), point.s_prev.data(), s_new.data(), jacobian.data());
        const std::array<double, C::num_states> expected = point.forward();
        for (int i = 0; i < C::num_states; ++i) {
            INFO("cell ", C::name, ", trial ", trial, ", d ", C::state_names[i], "' / d previous states");
            CHECK(std::abs(s_new[i] - expected[i]) <= 1e-15);
            const std::vector<double> row(jacobian.begin() + i * C::num_states,
                                          jacobian.begin() + (i + 1) * C::num_states);
            const GradientMismatch m = compare_with_finite_differences(
                point.s_prev, row, [&] { return point.forward()[i]; }, fd_step, abs_tol, 0.0);
            CHECK_MESSAGE(m.worst_excess <= 0, describe(m));
        }
    }
}

template <class C> void check_backward(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 100; ++trial) {
        Point<C> point(rng);
        std::vector<double> d_x(C::num_gates), d_p(C::num_parameters), ds_prev(C::num_states);
        C::backward(point.x.data(), point.p.data(), point.s_prev.data(), point.ds_new.data(), d_x.data(),
                    d_p.data(), ds_prev.data());
        const auto loss = [&] {
            const std::array<double, C::num_states> s = point.forward();
            double total = 0;
            for (int k = 0; k < C::num_states; ++k)
                total += point.ds_new[k] * s[k];
            return total;
        };
        INFO("cell ", C::name, ", trial ", trial);
        const GradientMismatch inputs =
            compare_with_finite_differences(point.x, d_x, loss, fd_step, abs_tol, 0.0);
        CHECK_MESSAGE(inputs.worst_excess <= 0, "input projections: ", describe(inputs));
        const GradientMismatch parameters =
            compare_with_finite_differences(point.p, d_p, loss, fd_step, abs_tol, 0.0);
        CHECK_MESSAGE(parameters.worst_excess <= 0, "parameters: ", describe(parameters));
        const GradientMismatch states =
            compare_with_finite_differences(point.s_prev, ds_prev, loss, fd_step, abs_tol, 0.0);
        CHECK_MESSAGE(states.worst_excess <= 0, "previous states: ", describe(states));
    }
}

// The kernels instantiate the cells with float: the same function, within float's rounding.
template <class C> void check_float_matches_double(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 50; ++trial) {
        Point<C> point(rng);
        std::array<double, C::num_states> s_new{}, ds_prev{};
        std::array<double, C::num_states * C::num_states> jacobian{};
        std::array<double, C::num_gates> d_x{};
        std::array<double, C::num_parameters> d_p{};
        C::step(point.x.data(), point.p.data(), point.s_prev.data(), s_new.data(), jacobian.data());
        C::backward(point.x.data(), point.p.data(), point.s_prev.data(), point.ds_new.data(), d_x.data(),
                    d_p.data(), ds_prev.data());
        const auto narrow = [](const std::vector<double>& v) {
            return std::vector<float>(v.begin(), v.end());
        };
        const std::vector<float> x = narrow(point.x), p = narrow(point.p), s = narrow(point.s_prev),
                                 ds = narrow(point.ds_new);
        std::array<float, C::num_states> s_new_f{}, ds_prev_f{};
        std::array<float, C::num_states * C::num_states> jacobian_f{};
        std::array<float, C::num_gates> d_x_f{};
        std::array<float, C::num_parameters> d_p_f{};
        C::step(x.data(), p.data(), s.data(), s_new_f.data(), jacobian_f.data());
        C::backward(x.data(), p.data(), s.data(), ds.data(), d_x_f.data(), d_p_f.data(), ds_prev_f.data());
        const auto close = [](double a, float b) { return std::abs(a - static_cast<double>(b)) <= 1e-5; };
        INFO("cell ", C::name, ", trial ", trial);
        for (int k = 0; k < C::num_states; ++k)
            CHECK((close(s_new[k], s_new_f[k]) && close(ds_prev[k], ds_prev_f[k])));
        for (int k = 0; k < C::num_states * C::num_states; ++k)
            CHECK(close(jacobian[k], jacobian_f[k]));
        for (int k = 0; k < C::num_gates; ++k)
            CHECK(close(d_x[k], d_x_f[k]));
        for (int k = 0; k < C::num_parameters; ++k)
            CHECK(close(d_p[k], d_p_f[k]));
    }
}

// Newton's initial guess is the step from a zero state, in float64 to rounding.
template <class C> void check_forward_from_zero(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 100; ++trial) {
        Point<C> point(rng);
        std::fill(point.s_prev.begin(), point.s_prev.end(), 0.0);
        std::array<double, C::num_states> guess{};
        C::forward_from_zero(point.x.data(), point.p.data(), guess.data());
        const std::array<double, C::num_states> expected = point.forward();
        INFO("cell ", C::name, ", trial ", trial);
        for (int k = 0; k < C::num_states; ++k)
            CHECK(std::abs(guess[k] - expected[k]) <= 1e-15);
    }
}

} // namespace

TEST_CASE("newton cells: the initial guess is the step from a zero state") {
    check_forward_from_zero<cells::FlashGru>(41);
    check_forward_from_zero<cells::FlashLstm>(42);
}

TEST_CASE("newton cells: every Jacobian entry matches central differences of the step") {
    check_jacobian<cells::FlashGru>(11);
    check_jacobian<cells::FlashLstm>(12);
}

TEST_CASE("newton cells: gradients of inputs, parameters and previous states match central differences") {
    check_backward<cells::FlashGru>(21);
    check_backward<cells::FlashLstm>(22);
}

TEST_CASE("newton cells: the float instantiation agrees with double") {
    check_float_matches_double<cells::FlashGru>(31);
    check_float_matches_double<cells::FlashLstm>(32);
}

TEST_CASE("newton cells: the registry names the cells and their tensors' rows") {
    const newton::CellInfo gru = newton::cell_info(newton::Cell::flash_gru);
    CHECK(gru.name == "flash_gru");
    CHECK(gru.num_states == 1);
    CHECK(gru.num_gates == 3);
    CHECK(gru.num_parameters == 3);
    const newton::CellInfo lstm = newton::cell_info(newton::Cell::flash_lstm);
    CHECK(lstm.num_states == 2);
    CHECK(lstm.state_names[0] == "h");
    CHECK(lstm.parameter_names[3] == "c_f");
    for (newton::Cell cell : newton::all_cells)
        CHECK(newton::parse_cell(newton::to_string(cell)) == cell);
    CHECK_THROWS_WITH_AS(newton::parse_cell("lstm"),
                         "flashrnn::newton: unknown cell 'lstm' (valid cells: flash_gru, flash_lstm)",
                         UnsupportedError);
}

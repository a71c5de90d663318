// Backpropagation through time of the CPU reference against central finite differences (float64)
// for every cell, every gradient, over small random problems.
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

// Step and tolerance: truncation ~ step^2 * f''' ~ 1e-10, rounding ~ 1e-16 * |L| / step ~ 1e-10.
constexpr double fd_step = 1e-5;
constexpr double abs_tol = 1e-7;
constexpr double rel_tol = 1e-6;

const ProblemShape shapes[] = {
    {1, 1, 1, 1}, // every size 1
    {1, 3, 2, 2}, // a single step
    {4, 2, 2, 3}, // several heads, odd head dim
    {3, 1, 3, 2}, // batch 1
    {5, 2, 1, 4}, // one head
};

void check_gradients(Cell cell, ProblemShape shape, std::uint64_t seed) {
    RandomProblem problem(cell, shape, seed);
    // sLSTM: the stabiliser m carries no gradient (slstm.hpp); for a loss on h alone this is exact
    // except for the initial m, checked separately below.
    const bool only_hidden = cell == Cell::slstm;
    const UpstreamGradients upstream = random_upstream(problem, seed + 1, only_hidden);
    const reference::BackwardResult grads = run_backward(problem, problem.forward(), upstream);
    const auto loss = [&] { return upstream.loss(problem.forward()); };

    INFO("cell ", cell_info(cell).name, ", ", to_string(shape));
    {
        const GradientMismatch m = compare_with_finite_differences(
            problem.gate_inputs, grads.d_gate_inputs.values, loss, fd_step, abs_tol, rel_tol);
        INFO("d_gate_inputs ", describe(m));
        CHECK(m.worst_excess <= 0);
    }
    {
        const GradientMismatch m = compare_with_finite_differences(
            problem.recurrent_weights, grads.d_recurrent_weights.values, loss, fd_step, abs_tol, rel_tol);
        INFO("d_recurrent_weights ", describe(m));
        CHECK(m.worst_excess <= 0);
    }
    {
        const GradientMismatch m = compare_with_finite_differences(problem.bias, grads.d_bias.values, loss,
                                                                   fd_step, abs_tol, rel_tol);
        INFO("d_bias ", describe(m));
        CHECK(m.worst_excess <= 0);
    }
    // For sLSTM only h, c and n of the initial states: the initial m's gradient is zero by design.
    std::size_t checked = problem.initial_states.size();
    if (cell == Cell::slstm) {
        checked =
            static_cast<std::size_t>(states_layout(cell_info(cell), shape).offset(cells::Slstm::m, 0, 0, 0));
        const auto& d_initial = grads.d_initial_states.values;
        CHECK(std::all_of(d_initial.begin() + static_cast<std::ptrdiff_t>(checked), d_initial.end(),
                          [](double g) { return g == 0.0; }));
    }
    const GradientMismatch m = compare_with_finite_differences(
        problem.initial_states, grads.d_initial_states.values, loss, fd_step, abs_tol, rel_tol, checked);
    INFO("d_initial_states ", describe(m));
    CHECK(m.worst_excess <= 0);
}

} // namespace

TEST_CASE("reference backward matches finite differences for every cell and gradient") {
    std::uint64_t seed = 1000;
    for (Cell cell : all_cells)
        for (ProblemShape shape : shapes)
            for (SequenceLayout layout : {SequenceLayout::time_major, SequenceLayout::batch_first}) {
                shape.gate_input_layout = layout;
                check_gradients(cell, shape, seed += 10);
            }
}

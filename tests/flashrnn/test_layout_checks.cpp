// The API boundary: wrong shapes are rejected with the tensor, its shape and the expected one; the
// batch-first layout is the time-major one with the two outer dimensions swapped.
#include "test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

const std::string forward_context = "flashrnn::reference::forward(lstm): ";

} // namespace

TEST_CASE("forward rejects tensors of the wrong shape, naming them") {
    const ProblemShape shape{3, 2, 2, 3};
    RandomProblem problem(Cell::lstm, shape, 7);
    reference::ForwardInputs in = problem.inputs();

    SUBCASE("recurrent weights with a wrong dimension") {
        in.recurrent_weights.shape = {4, 2, 3, 2};
        CHECK_THROWS_WITH_AS(reference::forward(Cell::lstm, shape, in),
                             (forward_context + "recurrent_weights has shape [4, 2, 3, 2], expected "
                                                "[G_rec=4, NH=2, DH=3, DH=3]")
                                 .c_str(),
                             ShapeError);
    }
    SUBCASE("gate inputs with a missing dimension") {
        in.gate_inputs.shape = {3, 2, 4, 6};
        CHECK_THROWS_WITH_AS(reference::forward(Cell::lstm, shape, in),
                             (forward_context + "gate_inputs has shape [3, 2, 4, 6], expected "
                                                "[T=3, B=2, G_in=4, NH=2, DH=3]")
                                 .c_str(),
                             ShapeError);
    }
    SUBCASE("a buffer shorter than its shape") {
        in.bias.values = in.bias.values.first(in.bias.values.size() - 1);
        CHECK_THROWS_WITH_AS(
            reference::forward(Cell::lstm, shape, in),
            (forward_context + "bias has shape [4, 2, 3] (24 values) but its buffer holds 23 values").c_str(),
            ShapeError);
    }
    SUBCASE("initial states of another cell") {
        in.initial_states.shape = {4, 2, 2, 3};
        CHECK_THROWS_WITH_AS(
            reference::forward(Cell::lstm, shape, in),
            (forward_context + "initial_states has shape [4, 2, 2, 3], expected [S=2, B=2, NH=2, DH=3]")
                .c_str(),
            ShapeError);
    }
    SUBCASE("time-major gate inputs for a batch-first problem") {
        ProblemShape batch_first = shape;
        batch_first.gate_input_layout = SequenceLayout::batch_first;
        CHECK_THROWS_WITH_AS(reference::forward(Cell::lstm, batch_first, in),
                             (forward_context + "gate_inputs has shape [3, 2, 4, 2, 3], expected "
                                                "[B=2, T=3, G_in=4, NH=2, DH=3]")
                                 .c_str(),
                             ShapeError);
    }
    SUBCASE("an empty problem") {
        CHECK_THROWS_WITH_AS(
            reference::forward(Cell::lstm, ProblemShape{3, 0, 2, 3}, in),
            "flashrnn: every problem size must be at least 1, got T=3, B=0, NH=2, DH=3, time-major",
            ShapeError);
    }
}

TEST_CASE("GRU takes 3 gate-input rows and R blocks but 4 bias rows") {
    const ProblemShape shape{2, 1, 1, 2};
    RandomProblem problem(Cell::gru, shape, 8);
    reference::ForwardInputs in = problem.inputs();
    CHECK(in.gate_inputs.shape == std::vector<std::int64_t>{2, 1, 3, 1, 2});
    CHECK(in.recurrent_weights.shape == std::vector<std::int64_t>{3, 1, 2, 2});
    CHECK(in.bias.shape == std::vector<std::int64_t>{4, 1, 2});
    CHECK_NOTHROW(reference::forward(Cell::gru, shape, in));

    std::vector<double> three_rows(6, 0.1);
    in.bias = ConstHostView{three_rows, {3, 1, 2}};
    CHECK_THROWS_WITH_AS(
        reference::forward(Cell::gru, shape, in),
        "flashrnn::reference::forward(gru): bias has shape [3, 1, 2], expected [G=4, NH=1, DH=2]",
        ShapeError);
}

TEST_CASE("backward rejects upstream gradients and outputs of the wrong shape") {
    const ProblemShape shape{2, 2, 1, 3};
    RandomProblem problem(Cell::elman, shape, 9);
    const reference::ForwardResult fwd = problem.forward();
    const reference::ForwardInputs in = problem.inputs();
    std::vector<double> wrong(2 * 2 * 3, 1.0);
    const reference::BackwardInputs bad_upstream{
        in.gate_inputs, in.recurrent_weights, in.bias, fwd.states.view(), ConstHostView{wrong, {2, 2, 1, 3}},
        std::nullopt};
    CHECK_THROWS_WITH_AS(reference::backward(Cell::elman, shape, bad_upstream),
                         "flashrnn::reference::backward(elman): d_states has shape [2, 2, 1, 3], expected "
                         "[S=1, T+1=3, B=2, NH=1, DH=3]",
                         ShapeError);

    const reference::BackwardInputs good{in.gate_inputs,    in.recurrent_weights, in.bias,
                                         fwd.states.view(), std::nullopt,         std::nullopt};
    std::vector<double> d_wx(12), d_r(9), d_b(3), d_s0(5);
    CHECK_THROWS_WITH_AS(
        reference::backward(
            Cell::elman, shape, good,
            {{d_wx, {2, 2, 1, 1, 3}}, {d_r, {1, 1, 3, 3}}, {d_b, {1, 1, 3}}, {d_s0, {1, 2, 1, 3}}}),
        "flashrnn::reference::backward(elman): d_initial_states has shape [1, 2, 1, 3] (6 values) "
        "but its buffer holds 5 values",
        ShapeError);
}

TEST_CASE("batch-first gate inputs give the same result as time-major ones") {
    for (Cell cell : all_cells) {
        const ProblemShape time_major{4, 3, 2, 2};
        RandomProblem problem(cell, time_major, 21);
        const CellInfo info = cell_info(cell);
        ProblemShape batch_first = time_major;
        batch_first.gate_input_layout = SequenceLayout::batch_first;

        // Transpose [T, B, rest] -> [B, T, rest] by hand.
        const std::size_t rest =
            static_cast<std::size_t>(info.num_input_gates * time_major.heads * time_major.head_dim);
        RandomProblem transposed = problem;
        transposed.shape = batch_first;
        for (std::size_t t = 0; t < 4; ++t)
            for (std::size_t b = 0; b < 3; ++b)
                for (std::size_t k = 0; k < rest; ++k)
                    transposed.gate_inputs[(b * 4 + t) * rest + k] =
                        problem.gate_inputs[(t * 3 + b) * rest + k];

        const reference::ForwardResult expected = problem.forward();
        const reference::ForwardResult actual = transposed.forward();
        INFO("cell ", info.name);
        CHECK(actual.states.values == expected.states.values);

        const UpstreamGradients upstream = random_upstream(problem, 22, false);
        const reference::BackwardResult g_expected = run_backward(problem, expected, upstream);
        const reference::BackwardResult g_actual = run_backward(transposed, actual, upstream);
        CHECK(g_actual.d_recurrent_weights.values == g_expected.d_recurrent_weights.values);
        CHECK(g_actual.d_initial_states.values == g_expected.d_initial_states.values);
        for (std::size_t t = 0; t < 4; ++t)
            for (std::size_t b = 0; b < 3; ++b)
                for (std::size_t k = 0; k < rest; ++k)
                    REQUIRE(g_actual.d_gate_inputs.values[(b * 4 + t) * rest + k] ==
                            g_expected.d_gate_inputs.values[(t * 3 + b) * rest + k]);
    }
}

TEST_CASE("last_state is the final time step of states") {
    RandomProblem problem(Cell::slstm, ProblemShape{3, 2, 2, 2}, 31);
    const reference::ForwardResult result = problem.forward();
    const StateSequenceLayout sequence = state_sequence_layout(cell_info(Cell::slstm), problem.shape);
    const StatesLayout single = states_layout(cell_info(Cell::slstm), problem.shape);
    for (int s = 0; s < 4; ++s)
        for (int b = 0; b < 2; ++b)
            for (int h = 0; h < 2; ++h)
                for (int d = 0; d < 2; ++d) {
                    CHECK(result.last_state.values[single.offset(s, b, h, d)] ==
                          result.states.values[sequence.offset(s, 3, b, h, d)]);
                    CHECK(result.states.values[sequence.offset(s, 0, b, h, d)] ==
                          problem.initial_states[single.offset(s, b, h, d)]);
                }
}

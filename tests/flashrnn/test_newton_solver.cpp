// The float64 references of the Newton family: Newton's method (paper Alg. 1a) against the
// sequential forward (fresh initialisation as App. C.1, and slow decay with |a| close to 1), the
// residual after 3 iterations at the level of the paper's App. A, the statistics; the backward
// (eq. 6) against central differences of a scalar loss of the sequential forward; refusals of bad
// input naming the tensor or the limit.
#include <limits>
#include <string>

#include "flashrnn/core/error.hpp"
#include "newton_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

newton::Options iterations(int count) {
    return {.max_iterations = count, .tolerance = std::nullopt, .backend = newton::Backend::automatic};
}

newton::Options tolerance(double absolute, double relative, int max_iterations) {
    return {.max_iterations = max_iterations,
            .tolerance = newton::Tolerance{absolute, relative},
            .backend = newton::Backend::automatic};
}

constexpr std::array<reference::ReductionMethod, 2> methods{reference::ReductionMethod::sequential,
                                                            reference::ReductionMethod::prefix};

// fp32's machine precision (2^-23): App. A's residuals reach it within 3 iterations.
constexpr double fp32_epsilon = 1.1920928955078125e-07;

} // namespace

TEST_CASE("newton solver: 3 iterations from eq. 10 reach the sequential forward at fp32 precision (fresh "
          "initialisation)") {
    std::uint64_t seed = 100;
    for (newton::Cell cell : newton::all_cells)
        for (std::int64_t T : {2, 3, 17, 256, 2049})
            for (bool with_initial_state : {false, true}) {
                NewtonProblem p =
                    random_newton_problem(cell, {T, 3, 32}, ++seed, 0.0, 1.0, with_initial_state);
                fresh_initialisation(p, ++seed);
                const reference::NewtonForwardResult sequential = p.sequential();
                for (reference::ReductionMethod method : methods) {
                    INFO(newton::to_string(cell), ", T = ", T,
                         std::string(with_initial_state ? ", h0 given" : ", h0 = 0"),
                         std::string(method == reference::ReductionMethod::prefix ? ", prefix"
                                                                                  : ", sequential"));
                    const auto one = reference::newton_solve(cell, p.shape, p.view(), iterations(1), method);
                    CHECK(one.statistics.iterations == 1);
                    // Step 1 is exact from the start and Newton is exact after T - 1 iterations; beyond that
                    // one iteration is far from converged, so the test is not trivial.
                    if (T > 3) CHECK(one.statistics.max_residual > 1e-4);
                    const auto three =
                        reference::newton_solve(cell, p.shape, p.view(), iterations(3), method);
                    CHECK(three.statistics.iterations == 3);
                    CHECK_FALSE(three.statistics.tolerance_met); // no tolerance asked
                    CHECK(three.statistics.max_residual <= fp32_epsilon);
                    CHECK(max_abs_difference(three.states.values, sequential.states.values) <= fp32_epsilon);
                    CHECK(max_abs_difference(three.last_state.values, sequential.last_state.values) <=
                          fp32_epsilon);
                }
            }
}

TEST_CASE("newton solver: with |a| close to 1 (slow decay) it converges to the sequential forward on a "
          "tolerance") {
    std::uint64_t seed = 200;
    for (newton::Cell cell : newton::all_cells)
        for (std::int64_t T : {1, 64, 4097})
            for (double smallest : {0.9, 0.99}) {
                const NewtonProblem p = random_newton_problem(cell, {T, 2, 8}, ++seed, smallest, 1.0, true);
                const reference::NewtonForwardResult sequential = p.sequential();
                INFO(newton::to_string(cell), ", T = ", T, ", |a| in [", smallest, ", 1]");
                const auto solved = reference::newton_solve(cell, p.shape, p.view(), tolerance(1e-12, 0, 50),
                                                            reference::ReductionMethod::prefix, 4);
                CHECK(solved.statistics.tolerance_met);
                CHECK(solved.statistics.max_residual <= 1e-12);
                CHECK(solved.statistics.iterations <= 50);
                CHECK(max_abs_difference(solved.states.values, sequential.states.values) <= 1e-10);
                if (T == 1) CHECK(solved.statistics.iterations == 0); // h_1^0 = f(h_0, x_1) is exact
            }
}

TEST_CASE("newton solver: a relative tolerance, and the limit when the tolerance is not met") {
    const NewtonProblem p = random_newton_problem(newton::Cell::flash_lstm, {300, 2, 4}, 301, 0.5, 1.0, true);
    const auto relative = reference::newton_solve(p.cell, p.shape, p.view(), tolerance(0, 1e-9, 20));
    CHECK(relative.statistics.tolerance_met);
    const auto limited = reference::newton_solve(p.cell, p.shape, p.view(), tolerance(1e-300, 0, 2));
    CHECK_FALSE(limited.statistics.tolerance_met);
    CHECK(limited.statistics.iterations == 2);
    CHECK(limited.statistics.max_residual > 1e-300);
}

TEST_CASE("newton backward: the reference gradients match central differences of a loss of the "
          "sequential forward") {
    std::uint64_t seed = 400;
    for (newton::Cell cell : newton::all_cells)
        for (bool with_initial_state : {false, true}) {
            NewtonProblem p = random_newton_problem(cell, {7, 2, 3}, ++seed, 0.2, 1.2, with_initial_state);
            const newton::CellInfo info = p.info();
            std::mt19937_64 rng(++seed);
            const std::vector<double> d_states =
                uniform(count_of(newton::state_sequence_shape(info, p.shape)), -1.0, 1.0, rng);
            const std::vector<double> d_last =
                uniform(count_of(newton::state_shape(info, p.shape)), -1.0, 1.0, rng);
            const auto loss = [&] {
                const reference::NewtonForwardResult f = p.sequential();
                double total = 0;
                for (std::size_t i = 0; i < d_states.size(); ++i)
                    total += d_states[i] * f.states.values[i];
                for (std::size_t i = 0; i < d_last.size(); ++i)
                    total += d_last[i] * f.last_state.values[i];
                return total;
            };
            const reference::NewtonForwardResult forward = p.sequential();
            for (reference::ReductionMethod method : methods) {
                const reference::NewtonGradients g = reference::newton_backward(
                    cell, p.shape,
                    {p.view(), forward.states.view(),
                     ConstHostView{d_states, sizes_of(newton::state_sequence_shape(info, p.shape))},
                     ConstHostView{d_last, sizes_of(newton::state_shape(info, p.shape))}},
                    method, 2);
                INFO(newton::to_string(cell), std::string(with_initial_state ? ", h0 given" : ", h0 = 0"),
                     std::string(method == reference::ReductionMethod::prefix ? ", prefix" : ", sequential"));
                const GradientMismatch inputs =
                    compare_with_finite_differences(p.inputs, g.d_inputs.values, loss, 1e-6, 1e-8, 1e-6);
                CHECK_MESSAGE(inputs.worst_excess <= 0, "d_inputs: ", describe(inputs));
                const GradientMismatch parameters = compare_with_finite_differences(
                    p.parameters, g.d_parameters.values, loss, 1e-6, 1e-8, 1e-6);
                CHECK_MESSAGE(parameters.worst_excess <= 0, "d_parameters: ", describe(parameters));
                if (with_initial_state) {
                    const GradientMismatch initial = compare_with_finite_differences(
                        p.initial_state, g.d_initial_state.values, loss, 1e-6, 1e-8, 1e-6);
                    CHECK_MESSAGE(initial.worst_excess <= 0, "d_initial_state: ", describe(initial));
                }
            }
        }
}

TEST_CASE("newton: the boundary checks of the GPU arguments name the wrong tensor") {
    const newton::Problem problem{
        newton::Cell::flash_lstm, DType::bf16, {.time_steps = 5, .batch = 2, .units = 4}};
    const newton::CellInfo info = newton::cell_info(problem.cell);
    alignas(16) static unsigned char memory[16];
    const auto view = [&](const NamedShape& shape, DType dtype) {
        return TensorView{memory, dtype, shape.sizes()};
    };
    const newton::Shape& s = problem.shape;
    const newton::ForwardArgs forward{view(newton::inputs_shape(info, s), DType::bf16),
                                      view(newton::parameters_shape(info, s), DType::fp32),
                                      {},
                                      view(newton::state_sequence_shape(info, s), DType::bf16),
                                      view(newton::state_shape(info, s), DType::fp32),
                                      view({{"statistics", newton::kStatisticsElements}}, DType::fp32),
                                      {}};
    CHECK_NOTHROW(newton::check_forward_args("newton::forward", problem, forward));

    newton::ForwardArgs bad = forward;
    bad.inputs = TensorView{memory, DType::bf16, {3, 2, 4, 6}};
    CHECK_THROWS_WITH_AS(
        newton::check_forward_args("newton::forward", problem, bad),
        "flashrnn::newton::forward(flash_lstm, bf16): inputs: expected [G=3, B=2, D=4, T=5] bf16, "
        "got [3, 2, 4, 6] bf16",
        ShapeError);
    bad = forward;
    bad.parameters = view(newton::parameters_shape(info, s), DType::bf16);
    CHECK_THROWS_WITH_AS(
        newton::check_forward_args("newton::forward", problem, bad),
        "flashrnn::newton::forward(flash_lstm, bf16): parameters: expected [P=5, D=4] fp32, got [5, "
        "4] bf16",
        ShapeError);
    bad = forward;
    bad.states = {};
    CHECK_THROWS_WITH_AS(newton::check_forward_args("newton::forward", problem, bad),
                         "flashrnn::newton::forward(flash_lstm, bf16): states is null (a required tensor)",
                         ShapeError);
    newton::Problem half = problem;
    half.dtype = DType::fp16;
    CHECK_THROWS_AS(newton::check_forward_args("newton::forward", half, forward), UnsupportedError);
    newton::Problem empty = problem;
    empty.shape.time_steps = 0;
    CHECK_THROWS_WITH_AS(
        newton::check_forward_args("newton::forward", empty, forward),
        "flashrnn::newton::forward(flash_lstm, bf16): the number of time steps must be in [1, "
        "2147483647], got T=0",
        ShapeError);

    const newton::BackwardArgs backward{forward.inputs,
                                        forward.parameters,
                                        {},
                                        forward.states,
                                        forward.states,
                                        {},
                                        view(newton::inputs_shape(info, s), DType::bf16),
                                        TensorView{memory, DType::fp32, {3, 4}}, // a GRU's parameter rows
                                        {},
                                        {}};
    CHECK_THROWS_WITH_AS(
        newton::check_backward_args("newton::backward", problem, backward),
        "flashrnn::newton::backward(flash_lstm, bf16): d_parameters: expected [P=5, D=4] fp32, got "
        "[3, 4] fp32",
        ShapeError);
}

TEST_CASE("newton: bad options and bad input values are refused with the limit or the position") {
    CHECK_THROWS_WITH_AS(newton::validate("newton::forward", iterations(0)),
                         "flashrnn::newton::forward: the iteration limit must be at least 1, got 0",
                         ShapeError);
    CHECK_THROWS_AS(newton::validate("newton::forward", tolerance(0, 0, 5)), ShapeError);
    CHECK_THROWS_AS(newton::validate("newton::forward", tolerance(-1e-6, 0, 5)), ShapeError);
    CHECK_THROWS_AS(
        newton::validate("newton::forward", tolerance(std::numeric_limits<double>::infinity(), 0, 5)),
        ShapeError);
    // Every backend takes a tolerance (the fused kernel stops per tile).
    for (newton::Backend backend : {newton::Backend::automatic, newton::Backend::newton,
                                    newton::Backend::sequential, newton::Backend::fused}) {
        newton::Options options = tolerance(1e-6, 1e-6, 5);
        options.backend = backend;
        CHECK_NOTHROW(newton::validate("newton::forward", options));
    }

    NewtonProblem p = random_newton_problem(newton::Cell::flash_gru, {6, 2, 3}, 500, 0.0, 1.0, true);
    CHECK_THROWS_WITH_AS(reference::newton_solve(p.cell, p.shape, p.view(), iterations(0)),
                         "flashrnn::reference::newton_solve: the iteration limit must be at least 1, got 0",
                         ShapeError);
    reference::NewtonInputs wrong = p.view();
    wrong.parameters.shape = {3, 2};
    CHECK_THROWS_WITH_AS(
        reference::newton_solve(p.cell, p.shape, wrong, iterations(3)),
        "flashrnn::reference::newton_solve: parameters has shape [3, 2], expected [P=3, D=3]", ShapeError);

    NewtonProblem nan_input = p;
    // [G, B, D, T] = [3, 2, 3, 6]: element (g=2, b=1, d=1, t=1) at ((g * 2 + b) * 3 + d) * 6 + t.
    nan_input.inputs[((2 * 2 + 1) * 3 + 1) * 6 + 1] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(
        reference::newton_solve(nan_input.cell, nan_input.shape, nan_input.view(), iterations(3)),
        "flashrnn::reference::newton_solve: inputs has a non-finite value (nan) at [G=2, B=1, D=1, "
        "T=1]",
        NumericalError);
    NewtonProblem infinite_parameter = p;
    infinite_parameter.parameters[4] = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(
        reference::newton_sequential_forward(infinite_parameter.cell, infinite_parameter.shape,
                                             infinite_parameter.view()),
        "flashrnn::reference::newton_sequential_forward: parameters has a non-finite value (inf) "
        "at [P=1, D=1]",
        NumericalError);
}

TEST_CASE("newton: divergence shows in the statistics, and a non-finite residual is refused") {
    // Diagonal parameters far beyond the paper's clip (|a| <= 0.5) give Jacobians above 1 in magnitude,
    // whose products over thousands of steps grow without bound, while the sequential forward stays in
    // (-1, 1). FlashGRU with |a| in [3, 6]: 3 iterations end far from the solution.
    const NewtonProblem gru =
        random_newton_problem(newton::Cell::flash_gru, {3000, 1, 4}, 600, 3.0, 6.0, false);
    CHECK(max_abs_difference(gru.sequential().states.values, std::vector<double>(12000, 0.0)) < 1.0);
    CHECK(reference::newton_solve(gru.cell, gru.shape, gru.view(), iterations(3)).statistics.max_residual >
          1.0);
    // FlashLSTM with |a| in [10, 20]: the updates overflow.
    const NewtonProblem lstm =
        random_newton_problem(newton::Cell::flash_lstm, {3000, 1, 4}, 600, 10.0, 20.0, false);
    CHECK(max_abs_difference(lstm.sequential().states.values, std::vector<double>(24000, 0.0)) < 1.0);
    try {
        reference::newton_solve(lstm.cell, lstm.shape, lstm.view(), iterations(3));
        FAIL("no NumericalError");
    } catch (const NumericalError& e) {
        const std::string message = e.what();
        CHECK(message.find("flashrnn::reference::newton_solve: the residual of sequence ") == 0);
        CHECK(message.find("is not finite after") != std::string::npos);
    }
}

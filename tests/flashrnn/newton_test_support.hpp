// Shared helpers of the Newton family's tests: random problems of the diagonal cells in the layouts
// of newton/problem.hpp, and the paper's fresh initialisation of the parameters (App. C.1).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "test_support.hpp"

namespace flashrnn::testing {

// The largest |a - b| over two equally long vectors.
inline double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

struct NewtonProblem {
    newton::Cell cell;
    newton::Shape shape;
    std::vector<double> inputs, parameters, initial_state; // initial_state empty: absent

    newton::CellInfo info() const { return newton::cell_info(cell); }

    reference::NewtonInputs view() const {
        const newton::CellInfo c = info();
        reference::NewtonInputs in{{inputs, sizes_of(newton::inputs_shape(c, shape))},
                                   {parameters, sizes_of(newton::parameters_shape(c, shape))},
                                   std::nullopt};
        if (!initial_state.empty())
            in.initial_state = ConstHostView{initial_state, sizes_of(newton::state_shape(c, shape))};
        return in;
    }

    reference::NewtonForwardResult sequential() const {
        return reference::newton_sequential_forward(cell, shape, view());
    }
};

// Input projections uniform in [-1, 1] (a Kaiming-uniform B applied to unit-variance inputs has
// variance 1/3), parameters uniform in +-[min_parameter, max_parameter] with random signs, and an
// initial state uniform in [-1, 1] when `with_initial_state`.
inline NewtonProblem random_newton_problem(newton::Cell cell, newton::Shape shape, std::uint64_t seed,
                                           double min_parameter, double max_parameter,
                                           bool with_initial_state) {
    std::mt19937_64 rng(seed);
    NewtonProblem p{cell, shape, {}, {}, {}};
    const newton::CellInfo c = p.info();
    p.inputs = uniform(count_of(newton::inputs_shape(c, shape)), -1.0, 1.0, rng);
    p.parameters = uniform(count_of(newton::parameters_shape(c, shape)), min_parameter, max_parameter, rng);
    std::bernoulli_distribution negative(0.5);
    for (double& a : p.parameters)
        a = negative(rng) ? -a : a;
    if (with_initial_state)
        p.initial_state = uniform(count_of(newton::state_shape(c, shape)), -1.0, 1.0, rng);
    return p;
}

// The paper's fresh initialisation of the diagonal parameters (App. C.1): Xavier normal over the
// [P, D] tensor (std sqrt(2 / (P + D))), each row's norm clipped to 0.5.
inline void fresh_initialisation(NewtonProblem& p, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto P = static_cast<std::size_t>(p.info().num_parameters);
    const auto D = static_cast<std::size_t>(p.shape.units);
    std::normal_distribution<double> xavier(0.0, std::sqrt(2.0 / static_cast<double>(P + D)));
    for (std::size_t row = 0; row < P; ++row) {
        double norm = 0;
        for (std::size_t d = 0; d < D; ++d) {
            p.parameters[row * D + d] = xavier(rng);
            norm += p.parameters[row * D + d] * p.parameters[row * D + d];
        }
        norm = std::sqrt(norm);
        if (norm > 0.5)
            for (std::size_t d = 0; d < D; ++d)
                p.parameters[row * D + d] *= 0.5 / norm;
    }
}

} // namespace flashrnn::testing

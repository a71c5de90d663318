// Shared helpers of the FlashRNN tests: random problems, the scalar test loss, and gradient checks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "flashrnn/flashrnn.hpp"

namespace flashrnn::testing {

inline std::vector<double> uniform(std::size_t count, double lo, double hi, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> values(count);
    for (double& v : values)
        v = dist(rng);
    return values;
}

inline std::size_t count_of(const NamedShape& shape) {
    return static_cast<std::size_t>(shape.sizes().product());
}

// Random inputs for one cell and problem; never zero. sLSTM normalisers are positive, as the cell
// produces them.
struct RandomProblem {
    Cell cell;
    ProblemShape shape;
    std::vector<double> gate_inputs, recurrent_weights, bias, initial_states;

    RandomProblem(Cell cell_, ProblemShape shape_, std::uint64_t seed) : cell(cell_), shape(shape_) {
        std::mt19937_64 rng(seed);
        const CellInfo info = cell_info(cell);
        const double weight_scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
        gate_inputs = uniform(count_of(gate_inputs_shape(info, shape)), -1.0, 1.0, rng);
        recurrent_weights =
            uniform(count_of(recurrent_weights_shape(info, shape)), -weight_scale, weight_scale, rng);
        bias = uniform(count_of(bias_shape(info, shape)), -0.5, 0.5, rng);
        initial_states = uniform(count_of(states_shape(info, shape)), -1.0, 1.0, rng);
        if (cell == Cell::slstm) {
            const StatesLayout layout = states_layout(info, shape);
            std::uniform_real_distribution<double> normaliser(0.5, 1.5);
            std::uniform_real_distribution<double> stabiliser(-0.5, 0.5);
            for (std::int64_t b = 0; b < shape.batch; ++b)
                for (std::int64_t h = 0; h < shape.heads; ++h)
                    for (std::int64_t d = 0; d < shape.head_dim; ++d) {
                        initial_states[layout.offset(cells::Slstm::n, b, h, d)] = normaliser(rng);
                        initial_states[layout.offset(cells::Slstm::m, b, h, d)] = stabiliser(rng);
                    }
        }
    }

    reference::ForwardInputs inputs() const {
        const CellInfo info = cell_info(cell);
        return {{gate_inputs, sizes_of(gate_inputs_shape(info, shape))},
                {recurrent_weights, sizes_of(recurrent_weights_shape(info, shape))},
                {bias, sizes_of(bias_shape(info, shape))},
                {initial_states, sizes_of(states_shape(info, shape))}};
    }

    reference::ForwardResult forward() const { return reference::forward(cell, shape, inputs()); }
};

// The upstream gradients of a test loss L = <d_states, states> + <d_last_state, last_state>.
struct UpstreamGradients {
    std::vector<double> d_states, d_last_state;
    std::vector<std::int64_t> states_shape_, last_shape;

    double loss(const reference::ForwardResult& result) const {
        double total = 0;
        for (std::size_t i = 0; i < d_states.size(); ++i)
            total += d_states[i] * result.states.values[i];
        for (std::size_t i = 0; i < d_last_state.size(); ++i)
            total += d_last_state[i] * result.last_state.values[i];
        return total;
    }
};

// Random upstream gradients; `only_hidden` keeps them on h alone (zero on every other state).
inline UpstreamGradients random_upstream(const RandomProblem& problem, std::uint64_t seed, bool only_hidden) {
    std::mt19937_64 rng(seed);
    const CellInfo info = cell_info(problem.cell);
    UpstreamGradients g;
    g.states_shape_ = sizes_of(state_sequence_shape(info, problem.shape));
    g.last_shape = sizes_of(states_shape(info, problem.shape));
    g.d_states = uniform(count_of(state_sequence_shape(info, problem.shape)), -1.0, 1.0, rng);
    g.d_last_state = uniform(count_of(states_shape(info, problem.shape)), -1.0, 1.0, rng);
    if (only_hidden) { // state 0 leads both tensors
        const std::size_t per_state_sequence = g.d_states.size() / static_cast<std::size_t>(info.num_states);
        const std::size_t per_state = g.d_last_state.size() / static_cast<std::size_t>(info.num_states);
        std::fill(g.d_states.begin() + static_cast<std::ptrdiff_t>(per_state_sequence), g.d_states.end(),
                  0.0);
        std::fill(g.d_last_state.begin() + static_cast<std::ptrdiff_t>(per_state), g.d_last_state.end(), 0.0);
    }
    return g;
}

inline reference::BackwardResult run_backward(const RandomProblem& problem,
                                              const reference::ForwardResult& fwd,
                                              const UpstreamGradients& upstream,
                                              RecurrentGradient policy = RecurrentGradient::full()) {
    const reference::ForwardInputs in = problem.inputs();
    return reference::backward(problem.cell, problem.shape,
                               {in.gate_inputs, in.recurrent_weights, in.bias, fwd.states.view(),
                                ConstHostView{upstream.d_states, upstream.states_shape_},
                                ConstHostView{upstream.d_last_state, upstream.last_shape}},
                               policy);
}

// The largest violation of |numeric - analytic| <= abs_tol + rel_tol * |numeric| over a tensor.
struct GradientMismatch {
    double worst_excess = 0; // > 0: the check failed by that much
    std::size_t index = 0;
    double numeric = 0, analytic = 0;
};

// Central differences of `loss` with respect to the first `count` elements of `parameter` (all by
// default; restored afterwards).
inline GradientMismatch compare_with_finite_differences(std::vector<double>& parameter,
                                                        const std::vector<double>& analytic,
                                                        const std::function<double()>& loss, double step,
                                                        double abs_tol, double rel_tol,
                                                        std::size_t count = SIZE_MAX) {
    REQUIRE(parameter.size() == analytic.size());
    GradientMismatch worst{-1.0};
    for (std::size_t i = 0; i < std::min(count, parameter.size()); ++i) {
        const double saved = parameter[i];
        parameter[i] = saved + step;
        const double plus = loss();
        parameter[i] = saved - step;
        const double minus = loss();
        parameter[i] = saved;
        const double numeric = (plus - minus) / (2 * step);
        const double excess = std::abs(numeric - analytic[i]) - (abs_tol + rel_tol * std::abs(numeric));
        if (excess > worst.worst_excess) worst = {excess, i, numeric, analytic[i]};
    }
    return worst;
}

inline std::string describe(const GradientMismatch& m) {
    return "worst element " + std::to_string(m.index) + ": numeric " + std::to_string(m.numeric) +
           ", analytic " + std::to_string(m.analytic);
}

} // namespace flashrnn::testing

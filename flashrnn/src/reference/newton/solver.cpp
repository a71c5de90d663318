// The float64 references of the Newton family's cells: the sequential forward, Newton's method
// (paper Alg. 1a) and the backward (eq. 6), one sequence (batch row, unit) at a time.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "flashrnn/newton/reference.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "reference/newton/linear_recurrence.hpp"
#include "reference/newton/sequences.hpp"

namespace flashrnn::reference {
namespace {

using detail::Matrix;
using detail::Vector;

// One sequence's inputs, gathered from the problem's tensors.
template <class C> struct Sequence {
    static constexpr int S = C::num_states;
    std::vector<std::array<double, C::num_gates>> x; // per step
    std::array<double, C::num_parameters> p{};
    Vector<S> h0{};
};

// The problem's tensors, checked, and the gather and scatter of one sequence.
struct Problem {
    std::string call;
    newton::CellInfo cell;
    newton::Shape shape;
    const NewtonInputs& inputs;
    detail::SequenceLayout layout;

    Problem(std::string call_, newton::Cell cell_, const newton::Shape& shape_, const NewtonInputs& inputs_)
        : call(std::move(call_)), cell(newton::cell_info(cell_)), shape(shape_),
          inputs(inputs_), layout{static_cast<std::size_t>(shape_.sequences()),
                                  static_cast<std::size_t>(shape_.units),
                                  static_cast<std::size_t>(shape_.time_steps)} {
        newton::validate(call, shape);
        const std::string context = "flashrnn::" + call;
        check_input(context, "inputs", inputs.inputs, newton::inputs_shape(cell, shape));
        check_input(context, "parameters", inputs.parameters, newton::parameters_shape(cell, shape));
        if (inputs.initial_state)
            check_input(context, "initial_state", *inputs.initial_state, newton::state_shape(cell, shape));
    }

    void check_input(const std::string& context, std::string_view name, const ConstHostView& view,
                     const NamedShape& expected) const {
        check_shape(context, name, view, expected);
        detail::check_finite(call, name, view.values, expected);
    }

    template <class C> Sequence<C> gather(std::size_t s) const {
        Sequence<C> q;
        q.x.resize(layout.length);
        for (std::size_t t = 0; t < layout.length; ++t)
            for (int g = 0; g < C::num_gates; ++g)
                q.x[t][g] = inputs.inputs.values[layout.row_offset(g, s, t)];
        for (int k = 0; k < C::num_parameters; ++k)
            q.p[k] = inputs.parameters.values[layout.parameter_offset(k, s)];
        if (inputs.initial_state)
            for (int k = 0; k < C::num_states; ++k)
                q.h0[k] = inputs.initial_state->values[layout.state_offset(k, s)];
        return q;
    }

    NewtonForwardResult empty_result() const {
        const std::vector<std::int64_t> states = sizes_of(newton::state_sequence_shape(cell, shape));
        const std::vector<std::int64_t> last = sizes_of(newton::state_shape(cell, shape));
        return {{std::vector<double>(layout.sequences * layout.length * cell.num_states), states},
                {std::vector<double>(layout.sequences * cell.num_states), last},
                {}};
    }

    template <int S>
    void scatter(std::size_t s, const std::vector<Vector<S>>& h, NewtonForwardResult& result) const {
        for (std::size_t t = 0; t < layout.length; ++t)
            for (int k = 0; k < S; ++k)
                result.states.values[layout.row_offset(k, s, t)] = h[t][k];
        for (int k = 0; k < S; ++k)
            result.last_state.values[layout.state_offset(k, s)] = h.back()[k];
    }
};

template <class C> std::vector<Vector<C::num_states>> sequential_states(const Sequence<C>& q) {
    std::vector<Vector<C::num_states>> h(q.x.size());
    Vector<C::num_states> previous = q.h0;
    for (std::size_t t = 0; t < q.x.size(); ++t) {
        C::forward(q.x[t].data(), q.p.data(), previous.data(), h[t].data());
        previous = h[t];
    }
    return h;
}

// Newton's method on one sequence; returns its statistics and leaves the solution in h.
template <class C>
newton::Statistics newton_sequence(const Problem& problem, std::size_t s, const Sequence<C>& q,
                                   const newton::Options& options, ReductionMethod method, int chunk_size,
                                   std::vector<Vector<C::num_states>>& h) {
    constexpr int S = C::num_states;
    const std::size_t T = q.x.size();
    h.assign(T, Vector<S>{});
    const Vector<S> zero{};
    for (std::size_t t = 0; t < T; ++t) // eq. 10 (the first step from the true initial state)
        C::forward(q.x[t].data(), q.p.data(), t == 0 ? q.h0.data() : zero.data(), h[t].data());
    std::vector<Matrix<S>> jacobians(T);
    std::vector<Vector<S>> residuals(T), update(T);
    newton::Statistics stats;
    for (;;) {
        double max_residual = 0, max_state = 0;
        for (std::size_t t = 0; t < T; ++t) {
            Vector<S> next{};
            C::step(q.x[t].data(), q.p.data(), t == 0 ? q.h0.data() : h[t - 1].data(), next.data(),
                    jacobians[t].data());
            for (int k = 0; k < S; ++k) {
                residuals[t][k] = next[k] - h[t][k];
                max_residual = std::max(max_residual, std::abs(residuals[t][k]));
                max_state = std::max(max_state, std::abs(h[t][k]));
                if (!std::isfinite(residuals[t][k]))
                    throw NumericalError(
                        "flashrnn::" + problem.call + ": the residual of sequence " + std::to_string(s) +
                        " (b=" + std::to_string(s / problem.layout.units) +
                        ", d=" + std::to_string(s % problem.layout.units) + ") at t=" + std::to_string(t) +
                        " is not finite after " + std::to_string(stats.iterations) +
                        " Newton iterations (divergence)");
            }
        }
        stats.max_residual = max_residual;
        if (options.tolerance)
            stats.tolerance_met =
                max_residual <= options.tolerance->absolute + options.tolerance->relative * max_state;
        if (stats.tolerance_met || stats.iterations == options.max_iterations) return stats;
        detail::solve_recurrence<S>(jacobians, residuals, update, false, method, chunk_size);
        for (std::size_t t = 0; t < T; ++t)
            for (int k = 0; k < S; ++k)
                h[t][k] += update[t][k];
        ++stats.iterations;
    }
}

} // namespace

NewtonForwardResult newton_sequential_forward(newton::Cell cell, const newton::Shape& shape,
                                              const NewtonInputs& inputs) {
    const Problem problem("reference::newton_sequential_forward", cell, shape, inputs);
    NewtonForwardResult result = problem.empty_result();
    newton::visit_cell(cell, [&]<class C>(C) {
        for (std::size_t s = 0; s < problem.layout.sequences; ++s)
            problem.scatter<C::num_states>(s, sequential_states(problem.gather<C>(s)), result);
    });
    return result;
}

NewtonForwardResult newton_solve(newton::Cell cell, const newton::Shape& shape, const NewtonInputs& inputs,
                                 const newton::Options& options, ReductionMethod method, int chunk_size) {
    const Problem problem("reference::newton_solve", cell, shape, inputs);
    newton::validate(problem.call, options);
    NewtonForwardResult result = problem.empty_result();
    result.statistics.tolerance_met = options.tolerance.has_value();
    newton::visit_cell(cell, [&]<class C>(C) {
        std::vector<Vector<C::num_states>> h;
        for (std::size_t s = 0; s < problem.layout.sequences; ++s) {
            const newton::Statistics stats =
                newton_sequence(problem, s, problem.gather<C>(s), options, method, chunk_size, h);
            problem.scatter<C::num_states>(s, h, result);
            newton::Statistics& total = result.statistics;
            total.iterations = std::max(total.iterations, stats.iterations);
            total.max_residual = std::max(total.max_residual, stats.max_residual);
            total.tolerance_met = total.tolerance_met && stats.tolerance_met;
        }
    });
    return result;
}

NewtonGradients newton_backward(newton::Cell cell, const newton::Shape& shape,
                                const NewtonBackwardInputs& inputs, ReductionMethod method, int chunk_size) {
    const Problem problem("reference::newton_backward", cell, shape, inputs.forward);
    const std::string context = "flashrnn::" + problem.call;
    const NamedShape sequence_shape = newton::state_sequence_shape(problem.cell, shape);
    const NamedShape state_shape = newton::state_shape(problem.cell, shape);
    problem.check_input(context, "states", inputs.states, sequence_shape);
    if (inputs.d_states) problem.check_input(context, "d_states", *inputs.d_states, sequence_shape);
    if (inputs.d_last_state) problem.check_input(context, "d_last_state", *inputs.d_last_state, state_shape);

    const detail::SequenceLayout& layout = problem.layout;
    NewtonGradients g{
        {std::vector<double>(inputs.forward.inputs.values.size()), inputs.forward.inputs.shape},
        {std::vector<double>(inputs.forward.parameters.values.size()), inputs.forward.parameters.shape},
        {std::vector<double>(layout.sequences * problem.cell.num_states), sizes_of(state_shape)}};
    newton::visit_cell(cell, [&]<class C>(C) {
        constexpr int S = C::num_states;
        const std::size_t T = layout.length;
        std::vector<Matrix<S>> transposed(T);
        std::vector<Vector<S>> h(T), upstream(T), carry(T);
        for (std::size_t s = 0; s < layout.sequences; ++s) {
            const Sequence<C> q = problem.gather<C>(s);
            for (std::size_t t = 0; t < T; ++t)
                for (int k = 0; k < S; ++k) {
                    h[t][k] = inputs.states.values[layout.row_offset(k, s, t)];
                    upstream[t][k] =
                        inputs.d_states ? inputs.d_states->values[layout.row_offset(k, s, t)] : 0.0;
                }
            if (inputs.d_last_state)
                for (int k = 0; k < S; ++k)
                    upstream[T - 1][k] += inputs.d_last_state->values[layout.state_offset(k, s)];
            // carry_t = J_{t+1}^T carry_{t+1} + upstream_t: a reverse reduction with the Jacobian of
            // step t + 1, taken at state t, transposed in row t.
            for (std::size_t t = 0; t + 1 < T; ++t) {
                Vector<S> unused{};
                Matrix<S> jacobian{};
                C::step(q.x[t + 1].data(), q.p.data(), h[t].data(), unused.data(), jacobian.data());
                transposed[t] = detail::transpose<S>(jacobian);
            }
            transposed[T - 1] = Matrix<S>{};
            detail::solve_recurrence<S>(transposed, upstream, carry, true, method, chunk_size);
            for (std::size_t t = 0; t < T; ++t) {
                std::array<double, C::num_gates> d_x{};
                std::array<double, C::num_parameters> d_p{};
                Vector<S> d_prev{};
                C::backward(q.x[t].data(), q.p.data(), t == 0 ? q.h0.data() : h[t - 1].data(),
                            carry[t].data(), d_x.data(), d_p.data(), d_prev.data());
                for (int k = 0; k < C::num_gates; ++k)
                    g.d_inputs.values[layout.row_offset(k, s, t)] = d_x[k];
                for (int k = 0; k < C::num_parameters; ++k)
                    g.d_parameters.values[layout.parameter_offset(k, s)] += d_p[k];
                if (t == 0)
                    for (int k = 0; k < S; ++k)
                        g.d_initial_state.values[layout.state_offset(k, s)] = d_prev[k];
            }
        }
    });
    return g;
}

} // namespace flashrnn::reference

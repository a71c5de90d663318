#include <algorithm>
#include <vector>

#include "argument_checks.hpp"
#include "flashrnn/cells/activations.hpp"
#include "flashrnn/rnn/reference.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "gate_preactivations.hpp"

namespace flashrnn::reference {
namespace {

// Walks the sequence backwards. `carry` [S, B, NH, DH] holds the gradient that step t+1 sends to the
// states of step t: the cell's pointwise part for every state, plus R^T dY (after the policy) for h.
template <PointwiseCell C>
void backward_cell(const CellInfo& info, const ProblemShape& p, const BackwardInputs& in,
                   const BackwardOutputs& out, RecurrentGradient policy) {
    const StateSequenceLayout sequence = state_sequence_layout(info, p);
    const StatesLayout single = states_layout(info, p);
    const GateInputsLayout input_layout = gate_inputs_layout(info, p);
    const BiasLayout bias_index = bias_layout(info, p);
    const detail::RecurrentProducts products{p.batch, C::num_recurrent_gates, p.heads, p.head_dim};
    std::vector<double> recurrent(static_cast<std::size_t>(products.size()));
    std::vector<double> d_recurrent(static_cast<std::size_t>(products.size()));
    std::vector<double> d_hidden_through_r(static_cast<std::size_t>(p.batch * p.heads * p.head_dim));
    std::vector<double> carry(static_cast<std::size_t>(single.size()), 0.0);
    const detail::GateSources sources{input_layout, in.gate_inputs.values.data(), products, recurrent.data(),
                                      bias_index,   in.bias.values.data()};
    const double* weights = in.recurrent_weights.values.data();
    const double* states = in.states.values.data();
    const double* d_states = in.d_states ? in.d_states->values.data() : nullptr;
    const double* d_last_state = in.d_last_state ? in.d_last_state->values.data() : nullptr;

    std::ranges::fill(out.d_recurrent_weights.values, 0.0);
    std::ranges::fill(out.d_bias.values, 0.0);

    double gates[C::num_gates];
    double d_gates[C::num_gates];
    double s_prev[C::num_states];
    double s_new[C::num_states];
    double ds_new[C::num_states];
    double ds_prev[C::num_states];
    for (std::int64_t t = p.time_steps; t >= 1; --t) {
        const double* hidden_prev = states + sequence.offset(0, t - 1, 0, 0, 0);
        products.forward(weights, hidden_prev, recurrent.data()); // recomputed rather than stored
        for (std::int64_t b = 0; b < p.batch; ++b)
            for (std::int64_t h = 0; h < p.heads; ++h)
                for (std::int64_t d = 0; d < p.head_dim; ++d) {
                    detail::assemble_gates<C>(sources, t - 1, b, h, d, gates);
                    for (int s = 0; s < C::num_states; ++s) {
                        s_prev[s] = states[sequence.offset(s, t - 1, b, h, d)];
                        s_new[s] = states[sequence.offset(s, t, b, h, d)];
                        ds_new[s] = carry[single.offset(s, b, h, d)];
                        if (d_states) ds_new[s] += d_states[sequence.offset(s, t, b, h, d)];
                        if (d_last_state && t == p.time_steps)
                            ds_new[s] += d_last_state[single.offset(s, b, h, d)];
                    }
                    C::backward(gates, s_prev, s_new, ds_new, d_gates, ds_prev);

                    for (int k = 0; k < C::num_input_gates; ++k)
                        out.d_gate_inputs.values[input_layout.offset(t - 1, b, k, h, d)] =
                            d_gates[C::gate_of_input_row(k)];
                    for (int k = 0; k < C::num_recurrent_gates; ++k)
                        d_recurrent[products.offset(b, k, h, d)] = d_gates[C::gate_of_recurrent_block(k)];
                    for (int g = 0; g < C::num_gates; ++g)
                        out.d_bias.values[bias_index.offset(g, h, d)] += d_gates[g];
                    for (int s = 0; s < C::num_states; ++s)
                        carry[single.offset(s, b, h, d)] = ds_prev[s];
                }

        products.accumulate_weight_gradient(d_recurrent.data(), hidden_prev,
                                            out.d_recurrent_weights.values.data());
        if (policy.mode == RecurrentGradient::Mode::cut) continue;
        products.backward_to_state(weights, d_recurrent.data(), d_hidden_through_r.data());
        // State 0 leads the carry, and its [B, NH, DH] slab has the layout of d_hidden_through_r.
        for (std::size_t i = 0; i < d_hidden_through_r.size(); ++i) {
            double through_r = d_hidden_through_r[i];
            if (policy.mode == RecurrentGradient::Mode::clipped)
                through_r = cells::clamp(through_r, -policy.clip_value, policy.clip_value);
            carry[i] += through_r;
        }
    }

    for (int s = 0; s < C::num_states; ++s)
        for (std::int64_t b = 0; b < p.batch; ++b)
            for (std::int64_t h = 0; h < p.heads; ++h)
                for (std::int64_t d = 0; d < p.head_dim; ++d) {
                    double gradient = carry[single.offset(s, b, h, d)];
                    if (d_states) gradient += d_states[sequence.offset(s, 0, b, h, d)];
                    out.d_initial_states.values[single.offset(s, b, h, d)] = gradient;
                }
}

} // namespace

void backward(Cell cell, const ProblemShape& problem, const BackwardInputs& inputs,
              const BackwardOutputs& outputs, RecurrentGradient policy) {
    const CellInfo info = cell_info(cell);
    validate(policy);
    detail::check_backward_arguments("flashrnn::reference::backward(" + std::string(info.name) + ")", info,
                                     problem, inputs, outputs);
    visit_cell(cell, [&]<class C>(C) { backward_cell<C>(info, problem, inputs, outputs, policy); });
}

BackwardResult backward(Cell cell, const ProblemShape& problem, const BackwardInputs& inputs,
                        RecurrentGradient policy) {
    const CellInfo info = cell_info(cell);
    validate(problem);
    auto allocate = [](const NamedShape& shape) {
        Tensor tensor;
        tensor.shape = sizes_of(shape);
        std::int64_t count = 1;
        for (std::int64_t size : tensor.shape)
            count *= size;
        tensor.values.resize(static_cast<std::size_t>(count));
        return tensor;
    };
    BackwardResult result{allocate(gate_inputs_shape(info, problem)),
                          allocate(recurrent_weights_shape(info, problem)),
                          allocate(bias_shape(info, problem)), allocate(states_shape(info, problem))};
    backward(cell, problem, inputs,
             BackwardOutputs{result.d_gate_inputs.view(), result.d_recurrent_weights.view(),
                             result.d_bias.view(), result.d_initial_states.view()},
             policy);
    return result;
}

} // namespace flashrnn::reference

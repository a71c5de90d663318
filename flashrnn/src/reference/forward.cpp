#include <vector>

#include "argument_checks.hpp"
#include "flashrnn/rnn/reference.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "gate_preactivations.hpp"

namespace flashrnn::reference {
namespace {

template <PointwiseCell C>
void forward_cell(const CellInfo& info, const ProblemShape& p, const ForwardInputs& in,
                  const ForwardOutputs& out) {
    const StateSequenceLayout sequence = state_sequence_layout(info, p);
    const StatesLayout single = states_layout(info, p);
    const detail::RecurrentProducts products{p.batch, C::num_recurrent_gates, p.heads, p.head_dim};
    std::vector<double> recurrent(static_cast<std::size_t>(products.size()));
    const detail::GateSources sources{
        gate_inputs_layout(info, p), in.gate_inputs.values.data(), products, recurrent.data(),
        bias_layout(info, p),        in.bias.values.data()};
    double* states = out.states.values.data();

    for (int s = 0; s < C::num_states; ++s)
        for (std::int64_t b = 0; b < p.batch; ++b)
            for (std::int64_t h = 0; h < p.heads; ++h)
                for (std::int64_t d = 0; d < p.head_dim; ++d)
                    states[sequence.offset(s, 0, b, h, d)] =
                        in.initial_states.values[single.offset(s, b, h, d)];

    double gates[C::num_gates];
    double s_prev[C::num_states];
    double s_new[C::num_states];
    for (std::int64_t t = 0; t < p.time_steps; ++t) {
        products.forward(in.recurrent_weights.values.data(), states + sequence.offset(0, t, 0, 0, 0),
                         recurrent.data());
        for (std::int64_t b = 0; b < p.batch; ++b)
            for (std::int64_t h = 0; h < p.heads; ++h)
                for (std::int64_t d = 0; d < p.head_dim; ++d) {
                    detail::assemble_gates<C>(sources, t, b, h, d, gates);
                    for (int s = 0; s < C::num_states; ++s)
                        s_prev[s] = states[sequence.offset(s, t, b, h, d)];
                    C::forward(gates, s_prev, s_new);
                    for (int s = 0; s < C::num_states; ++s)
                        states[sequence.offset(s, t + 1, b, h, d)] = s_new[s];
                }
    }

    for (int s = 0; s < C::num_states; ++s)
        for (std::int64_t b = 0; b < p.batch; ++b)
            for (std::int64_t h = 0; h < p.heads; ++h)
                for (std::int64_t d = 0; d < p.head_dim; ++d)
                    out.last_state.values[single.offset(s, b, h, d)] =
                        states[sequence.offset(s, p.time_steps, b, h, d)];
}

} // namespace

void forward(Cell cell, const ProblemShape& problem, const ForwardInputs& inputs,
             const ForwardOutputs& outputs) {
    const CellInfo info = cell_info(cell);
    detail::check_forward_arguments("flashrnn::reference::forward(" + std::string(info.name) + ")", info,
                                    problem, inputs, outputs);
    visit_cell(cell, [&]<class C>(C) { forward_cell<C>(info, problem, inputs, outputs); });
}

ForwardResult forward(Cell cell, const ProblemShape& problem, const ForwardInputs& inputs) {
    const CellInfo info = cell_info(cell);
    validate(problem);
    ForwardResult result;
    result.states.shape = sizes_of(state_sequence_shape(info, problem));
    result.states.values.resize(static_cast<std::size_t>(state_sequence_layout(info, problem).size()));
    result.last_state.shape = sizes_of(states_shape(info, problem));
    result.last_state.values.resize(static_cast<std::size_t>(states_layout(info, problem).size()));
    forward(cell, problem, inputs, ForwardOutputs{result.states.view(), result.last_state.view()});
    return result;
}

} // namespace flashrnn::reference

#include "argument_checks.hpp"

#include "flashrnn/rnn/tensor_shapes.hpp"

namespace flashrnn::reference::detail {
namespace {

void check_parameters(const std::string& context, const CellInfo& cell, const ProblemShape& problem,
                      const ConstHostView& gate_inputs, const ConstHostView& recurrent_weights,
                      const ConstHostView& bias) {
    validate(problem);
    check_shape(context, "gate_inputs", gate_inputs, gate_inputs_shape(cell, problem));
    check_shape(context, "recurrent_weights", recurrent_weights, recurrent_weights_shape(cell, problem));
    check_shape(context, "bias", bias, bias_shape(cell, problem));
}

} // namespace

void check_forward_arguments(const std::string& context, const CellInfo& cell, const ProblemShape& problem,
                             const ForwardInputs& inputs, const ForwardOutputs& outputs) {
    check_parameters(context, cell, problem, inputs.gate_inputs, inputs.recurrent_weights, inputs.bias);
    check_shape(context, "initial_states", inputs.initial_states, states_shape(cell, problem));
    check_shape(context, "states", outputs.states, state_sequence_shape(cell, problem));
    check_shape(context, "last_state", outputs.last_state, states_shape(cell, problem));
}

void check_backward_arguments(const std::string& context, const CellInfo& cell, const ProblemShape& problem,
                              const BackwardInputs& inputs, const BackwardOutputs& outputs) {
    check_parameters(context, cell, problem, inputs.gate_inputs, inputs.recurrent_weights, inputs.bias);
    check_shape(context, "states", inputs.states, state_sequence_shape(cell, problem));
    if (inputs.d_states)
        check_shape(context, "d_states", *inputs.d_states, state_sequence_shape(cell, problem));
    if (inputs.d_last_state)
        check_shape(context, "d_last_state", *inputs.d_last_state, states_shape(cell, problem));
    check_shape(context, "d_gate_inputs", outputs.d_gate_inputs, gate_inputs_shape(cell, problem));
    check_shape(context, "d_recurrent_weights", outputs.d_recurrent_weights,
                recurrent_weights_shape(cell, problem));
    check_shape(context, "d_bias", outputs.d_bias, bias_shape(cell, problem));
    check_shape(context, "d_initial_states", outputs.d_initial_states, states_shape(cell, problem));
}

} // namespace flashrnn::reference::detail

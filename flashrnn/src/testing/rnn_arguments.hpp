// DeviceTensors as the arguments of rnn::forward / rnn::backward, viewed with the problem's shapes
// (for the CLI, the benchmarks and the GPU tests). Optional tensors may be null.
#pragma once

#include "flashrnn/rnn/passes.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "testing/device_tensor.hpp"

namespace flashrnn::testing {

inline TensorView view_or_absent(const DeviceTensor* tensor, const NamedShape& shape) {
    return tensor ? tensor->view(shape.sizes()) : TensorView{};
}

// The gate cache: gate_cache_elements(problem) fp32 values.
inline TensorView gate_cache_view(const rnn::Problem& problem, const DeviceTensor* cache) {
    return cache ? cache->view({static_cast<std::int64_t>(rnn::gate_cache_elements(problem))}) : TensorView{};
}

inline rnn::ForwardArgs forward_args(const rnn::Problem& problem, const DeviceTensor& gate_inputs,
                                     const DeviceTensor& recurrent_weights, const DeviceTensor& bias,
                                     const DeviceTensor& initial_states, const DeviceTensor& states,
                                     const DeviceTensor* last_state, const DeviceTensor* gate_cache,
                                     const DeviceTensor& workspace) {
    const CellInfo info = cell_info(problem.cell);
    const ProblemShape& p = problem.shape;
    return {gate_inputs.view(gate_inputs_shape(info, p).sizes()),
            recurrent_weights.view(recurrent_weights_shape(info, p).sizes()),
            bias.view(bias_shape(info, p).sizes()),
            initial_states.view(states_shape(info, p).sizes()),
            states.view(state_sequence_shape(info, p).sizes()),
            view_or_absent(last_state, states_shape(info, p)),
            gate_cache_view(problem, gate_cache),
            workspace.workspace()};
}

inline rnn::BackwardArgs backward_args(const rnn::Problem& problem, const DeviceTensor& recurrent_weights,
                                       const DeviceTensor& states, const DeviceTensor& gate_cache,
                                       const DeviceTensor* d_states, const DeviceTensor* d_last_state,
                                       const DeviceTensor& d_gate_inputs,
                                       const DeviceTensor& d_recurrent_weights, const DeviceTensor& d_bias,
                                       const DeviceTensor& d_initial_states, const DeviceTensor& workspace) {
    const CellInfo info = cell_info(problem.cell);
    const ProblemShape& p = problem.shape;
    return {recurrent_weights.view(recurrent_weights_shape(info, p).sizes()),
            states.view(state_sequence_shape(info, p).sizes()),
            gate_cache_view(problem, &gate_cache),
            view_or_absent(d_states, state_sequence_shape(info, p)),
            view_or_absent(d_last_state, states_shape(info, p)),
            d_gate_inputs.view(gate_inputs_shape(info, p).sizes()),
            d_recurrent_weights.view(recurrent_weights_shape(info, p).sizes()),
            d_bias.view(bias_shape(info, p).sizes()),
            d_initial_states.view(states_shape(info, p).sizes()),
            workspace.workspace()};
}

} // namespace flashrnn::testing

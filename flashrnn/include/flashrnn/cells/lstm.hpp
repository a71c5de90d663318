// LSTM pointwise cell (Hochreiter & Schmidhuber 1997, with forget gate; FlashRNN paper App. A).
//
//   c' = sigmoid(f) * c + sigmoid(i) * tanh(z)
//   h' = sigmoid(o) * tanh(c')
//
// Gates are in torch.nn.LSTM order (i, f, z, o) -- PyTorch calls z "g" -- so nn.LSTM's
// weight_ih / weight_hh / bias_ih + bias_hh map onto Wx, R and b without reordering.
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct Lstm {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "lstm";
#endif
    enum State : int { h = 0, c = 1 };
    enum Gate : int { i = 0, f = 1, z = 2, o = 3 };
    static constexpr int num_states = 2;
    static constexpr int num_gates = 4;
    static constexpr int num_input_gates = 4;
    static constexpr int num_recurrent_gates = 4;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h", "c"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"i", "f", "z", "o"};
#endif

    // Every gate has an input row and a recurrent block, in gate order.
    FLASHRNN_HOST_DEVICE static constexpr int gate_of_input_row(int row) {
        return row;
    }
    FLASHRNN_HOST_DEVICE static constexpr int gate_of_recurrent_block(int block) {
        return block;
    }

    template <class T> FLASHRNN_HOST_DEVICE static void forward(const T* gates, const T* s_prev, T* s_new) {
        using math::tanh;
        const T c_new = sigmoid(gates[f]) * s_prev[c] + sigmoid(gates[i]) * tanh(gates[z]);
        s_new[c] = c_new;
        s_new[h] = sigmoid(gates[o]) * tanh(c_new);
    }

    // ds_new: total gradient of the loss with respect to the new states. Writes the gradient of
    // the gate pre-activations and the pointwise part of the gradient of the previous states (the
    // R^T d_gates part for h is added by the caller).
    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* gates, const T* s_prev, const T* s_new,
                                              const T* ds_new, T* d_gates, T* ds_prev) {
        using math::tanh;
        const T i_gate = sigmoid(gates[i]);
        const T f_gate = sigmoid(gates[f]);
        const T z_value = tanh(gates[z]);
        const T o_gate = sigmoid(gates[o]);
        const T tanh_c = tanh(s_new[c]);

        const T dc = ds_new[c] + ds_new[h] * o_gate * tanh_derivative_from_output(tanh_c);
        d_gates[o] = ds_new[h] * tanh_c * sigmoid_derivative_from_output(o_gate);
        d_gates[i] = dc * z_value * sigmoid_derivative_from_output(i_gate);
        d_gates[f] = dc * s_prev[c] * sigmoid_derivative_from_output(f_gate);
        d_gates[z] = dc * i_gate * tanh_derivative_from_output(z_value);
        ds_prev[h] = T(0);
        ds_prev[c] = dc * f_gate;
    }
};

} // namespace flashrnn::cells

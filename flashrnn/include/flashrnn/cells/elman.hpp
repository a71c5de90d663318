// Elman RNN pointwise cell (Elman 1990; FlashRNN paper App. A):  h' = tanh(x + R h + b).
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct Elman {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "elman";
#endif
    enum State : int { h = 0 };
    enum Gate : int { g = 0 };
    static constexpr int num_states = 1;
    static constexpr int num_gates = 1;
    static constexpr int num_input_gates = 1;
    static constexpr int num_recurrent_gates = 1;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"g"};
#endif

    FLASHRNN_HOST_DEVICE static constexpr int gate_of_input_row(int row) {
        return row;
    }
    FLASHRNN_HOST_DEVICE static constexpr int gate_of_recurrent_block(int block) {
        return block;
    }

    template <class T>
    FLASHRNN_HOST_DEVICE static void forward(const T* gates, const T* /*s_prev*/, T* s_new) {
        using math::tanh;
        s_new[h] = tanh(gates[g]);
    }

    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* /*gates*/, const T* /*s_prev*/, const T* s_new,
                                              const T* ds_new, T* d_gates, T* ds_prev) {
        d_gates[g] = ds_new[h] * tanh_derivative_from_output(s_new[h]);
        ds_prev[h] = T(0);
    }
};

} // namespace flashrnn::cells

// GRU pointwise cell in the "reset after the matrix product" form of cuDNN and torch.nn.GRU:
//
//   r  = sigmoid(x_r + R_r h + b_r)
//   z  = sigmoid(x_z + R_z h + b_z)              (the update gate)
//   n  = tanh(x_n + b_n + r * (R_n h + b_hn))
//   h' = z * h + (1 - z) * n
//
// The recurrent part of the candidate, R_n h + b_hn, is scaled by r after the matrix product, so
// it is a gate of its own ("hn") that has no input row, while the input part of the candidate
// ("n") has no recurrent block. Hence the three gate counts differ:
//   Wx rows    (3): r, z, n     -- torch weight_ih_l0 order
//   R blocks   (3): r, z, hn    -- torch weight_hh_l0 order (r, z, n)
//   bias rows  (4): r, z, n, hn -- b_r = b_ir + b_hr, b_z = b_iz + b_hz, b_n = b_in, b_hn = b_hn
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct Gru {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "gru";
#endif
    enum State : int { h = 0 };
    enum Gate : int { r = 0, z = 1, n = 2, hn = 3 };
    static constexpr int num_states = 1;
    static constexpr int num_gates = 4;
    static constexpr int num_input_gates = 3;
    static constexpr int num_recurrent_gates = 3;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"r", "z", "n", "hn"};
#endif

    FLASHRNN_HOST_DEVICE static constexpr int gate_of_input_row(int row) {
        return row;
    }                                                                              // r, z, n
    FLASHRNN_HOST_DEVICE static constexpr int gate_of_recurrent_block(int block) { // r, z, hn
        return block == 2 ? int(hn) : block;
    }

    template <class T> FLASHRNN_HOST_DEVICE static void forward(const T* gates, const T* s_prev, T* s_new) {
        using math::tanh;
        const T r_gate = sigmoid(gates[r]);
        const T z_gate = sigmoid(gates[z]);
        const T candidate = tanh(gates[n] + r_gate * gates[hn]);
        s_new[h] = z_gate * s_prev[h] + (T(1) - z_gate) * candidate;
    }

    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* gates, const T* s_prev, const T* /*s_new*/,
                                              const T* ds_new, T* d_gates, T* ds_prev) {
        using math::tanh;
        const T r_gate = sigmoid(gates[r]);
        const T z_gate = sigmoid(gates[z]);
        const T candidate = tanh(gates[n] + r_gate * gates[hn]);
        const T dh = ds_new[h];

        const T d_candidate_pre = dh * (T(1) - z_gate) * tanh_derivative_from_output(candidate);
        d_gates[n] = d_candidate_pre;
        d_gates[hn] = d_candidate_pre * r_gate;
        d_gates[r] = d_candidate_pre * gates[hn] * sigmoid_derivative_from_output(r_gate);
        d_gates[z] = dh * (s_prev[h] - candidate) * sigmoid_derivative_from_output(z_gate);
        ds_prev[h] = dh * z_gate;
    }
};

} // namespace flashrnn::cells

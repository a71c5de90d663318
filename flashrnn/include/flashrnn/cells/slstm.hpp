// sLSTM pointwise cell with stabilised exponential gating (Beck et al. 2024; FlashRNN paper App. A):
//
//   m' = max(log sigmoid(f) + m, i)                  stabiliser
//   i~ = exp(i - m'),  f~ = exp(log sigmoid(f) + m - m')
//   c' = f~ c + i~ tanh(z)
//   n' = f~ n + i~                                   normaliser
//   h' = sigmoid(o) * c' / n'
//
// Gate order i, f, z, o; state order h, c, n, m (as in the original FlashRNN).
//
// The stabiliser. c and n are stored scaled by exp(-m); the unscaled c~ = c e^m and n~ = n e^m
// follow the unstabilised recurrence c~' = sigmoid(f) c~ + exp(i) tanh(z), and h' depends only on
// c~'/n~', so h does not depend on which m' the cell picks. Two consequences:
//  * An empty state (n == 0, e.g. the usual zero initial state) has no history to stabilise against;
//    then m' = i, so that i~ = 1 and n' = 1, and f~ is capped at 1 (it multiplies c = n = 0 and
//    would otherwise overflow for very negative i). Elsewhere m' >= log sigmoid(f) + m gives f~ <= 1,
//    and n' >= 1 for every state the cell produces (one of i~, f~ equals 1); the original kernels'
//    extra floor n' = max(n', 1) and cap min(f~, 1) are therefore no-ops there and not applied.
//  * Backward: gradients do not flow through m (as in the original FlashRNN). m' and m are treated
//    as constants, the gradient for m is zero and an upstream gradient on m is ignored. For a loss
//    that depends on the states through h only, this is the exact gradient with respect to the
//    gates, R, b and the initial h, c, n; only the initial m's true gradient (nonzero, since
//    c~_0 = c_0 e^{m_0}) is reported as zero.
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct Slstm {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "slstm";
#endif
    enum State : int { h = 0, c = 1, n = 2, m = 3 };
    enum Gate : int { i = 0, f = 1, z = 2, o = 3 };
    static constexpr int num_states = 4;
    static constexpr int num_gates = 4;
    static constexpr int num_input_gates = 4;
    static constexpr int num_recurrent_gates = 4;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h", "c", "n", "m"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"i", "f", "z", "o"};
#endif

    FLASHRNN_HOST_DEVICE static constexpr int gate_of_input_row(int row) {
        return row;
    }
    FLASHRNN_HOST_DEVICE static constexpr int gate_of_recurrent_block(int block) {
        return block;
    }

    template <class T> FLASHRNN_HOST_DEVICE static T stabilizer(const T* gates, const T* s_prev) {
        const T log_forget = log_sigmoid(gates[f]) + s_prev[m];
        if (s_prev[n] == T(0)) return gates[i];
        return log_forget > gates[i] ? log_forget : gates[i];
    }

    // From an empty state the forget gate is capped at 1: it multiplies c = n = 0 there, and
    // exp(forget_exponent) overflows for a very negative input gate (inf * 0 = NaN).
    template <class T> FLASHRNN_HOST_DEVICE static bool forget_is_capped(const T* s_prev, T forget_exponent) {
        return s_prev[n] == T(0) && forget_exponent > T(0);
    }

    // The cell for a given stabiliser m_new; forward() = this with m_new = stabilizer(...). Exposed
    // so that tests can check backward() against finite differences at a frozen stabiliser.
    template <class T>
    FLASHRNN_HOST_DEVICE static void forward_given_stabilizer(const T* gates, const T* s_prev, T m_new,
                                                              T* s_new) {
        using math::exp;
        using math::tanh;
        const T input_gate = exp(gates[i] - m_new);
        const T forget_exponent = log_sigmoid(gates[f]) + s_prev[m] - m_new;
        const T forget_gate = forget_is_capped(s_prev, forget_exponent) ? T(1) : exp(forget_exponent);
        const T c_new = forget_gate * s_prev[c] + input_gate * tanh(gates[z]);
        const T n_new = forget_gate * s_prev[n] + input_gate;
        s_new[c] = c_new;
        s_new[n] = n_new;
        s_new[m] = m_new;
        s_new[h] = sigmoid(gates[o]) * c_new / n_new;
    }

    template <class T> FLASHRNN_HOST_DEVICE static void forward(const T* gates, const T* s_prev, T* s_new) {
        forward_given_stabilizer(gates, s_prev, stabilizer(gates, s_prev), s_new);
    }

    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* gates, const T* s_prev, const T* s_new,
                                              const T* ds_new, T* d_gates, T* ds_prev) {
        using math::exp;
        using math::tanh;
        const T m_new = s_new[m];
        const T input_gate = exp(gates[i] - m_new);
        const T forget_exponent = log_sigmoid(gates[f]) + s_prev[m] - m_new;
        const bool forget_capped = forget_is_capped(s_prev, forget_exponent);
        const T forget_gate = forget_capped ? T(1) : exp(forget_exponent);
        const T z_value = tanh(gates[z]);
        const T o_gate = sigmoid(gates[o]);
        const T c_over_n = s_new[c] / s_new[n];

        const T dh = ds_new[h];
        const T dc = ds_new[c] + dh * o_gate / s_new[n];
        const T dn = ds_new[n] - dh * o_gate * c_over_n / s_new[n];
        d_gates[o] = dh * c_over_n * sigmoid_derivative_from_output(o_gate);
        d_gates[i] = (dc * z_value + dn) * input_gate;
        // d log_sigmoid(f) / df = 1 - sigmoid(f); a capped forget gate is constant.
        d_gates[f] = forget_capped
                         ? T(0)
                         : (dc * s_prev[c] + dn * s_prev[n]) * forget_gate * (T(1) - sigmoid(gates[f]));
        d_gates[z] = dc * input_gate * tanh_derivative_from_output(z_value);
        ds_prev[h] = T(0);
        ds_prev[c] = dc * forget_gate;
        ds_prev[n] = dn * forget_gate;
        ds_prev[m] = T(0);
    }
};

} // namespace flashrnn::cells

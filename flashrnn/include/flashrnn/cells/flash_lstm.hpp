// FlashLSTM (Danieli et al., "ParaRNN", eq. 7b with the diagonal matrices of eq. 9): an LSTM with
// coupled input and forget gates (CIFG) and peephole connections whose units never mix, so that its
// Jacobian with respect to the previous state [h, c] is a 2x2 block of diagonals and Newton's method
// can solve the whole sequence in parallel (the newton module). Per unit:
//
//   f  = sigmoid(a_f h + c_f c + x_f)          (the forget gate; the input gate is 1 - f)
//   z  = tanh(a_z h + x_z)                     (the candidate)
//   c' = f c + (1 - f) z
//   o  = sigmoid(a_o h + c_o c' + x_o)         (the output gate peeks at the new cell state)
//   h' = o tanh(c')
//
// x_* are the precomputed input projections B_* x + b_*, a_* the diagonals of the state matrices
// A_*, c_* those of the peephole matrices C_*. The Jacobian, derived from the equations (the paper's
// eq. 8 is garbled), with v^ the pre-activation of v:
//
//   dc'/dc = f + (c - z) sigmoid'(f^) c_f
//   dc'/dh = (c - z) sigmoid'(f^) a_f + (1 - f) tanh'(z^) a_z
//   k      = tanh(c') sigmoid'(o^) c_o + o tanh'(c')              (dh'/dc' through both paths)
//   dh'/dh = tanh(c') sigmoid'(o^) a_o + k dc'/dh
//   dh'/dc = k dc'/dc
//
// States are ordered as in cells::Lstm: h (state 0, the output) then c.
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct FlashLstm {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "flash_lstm";
#endif
    enum State : int { h = 0, c = 1 };
    enum Gate : int { f = 0, z = 1, o = 2 };                              // rows of the input projections
    enum Parameter : int { a_f = 0, a_z = 1, a_o = 2, c_f = 3, c_o = 4 }; // rows of the diagonal parameters
    static constexpr int num_states = 2;
    static constexpr int num_gates = 3;
    static constexpr int num_parameters = 5;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h", "c"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"f", "z", "o"};
    static constexpr std::array<std::string_view, num_parameters> parameter_names{"a_f", "a_z", "a_o", "c_f",
                                                                                  "c_o"};
#endif

    // The gates, the new cell state and tanh of it, and the derivatives of the activations. (The sums
    // are written in the order that folds each product into one fused multiply-add, and c' as
    // z + f (c - z), which shares c - z with the Jacobian: the fused Newton forward is instruction-bound.)
    template <class T> struct Gates { T f, z, o, c_new, tanh_c, df, dz, do_, dtanh_c; };

    template <class T> FLASHRNN_HOST_DEVICE static Gates<T> gates(const T* x, const T* p, const T* s_prev) {
        using math::tanh;
        Gates<T> g;
        g.f = sigmoid(x[f] + p[a_f] * s_prev[h] + p[c_f] * s_prev[c]);
        g.z = tanh(p[a_z] * s_prev[h] + x[z]);
        g.c_new = g.z + g.f * (s_prev[c] - g.z);
        g.o = sigmoid(x[o] + p[a_o] * s_prev[h] + p[c_o] * g.c_new);
        g.tanh_c = tanh(g.c_new);
        g.df = sigmoid_derivative_from_output(g.f);
        g.dz = tanh_derivative_from_output(g.z);
        g.do_ = sigmoid_derivative_from_output(g.o);
        g.dtanh_c = tanh_derivative_from_output(g.tanh_c);
        return g;
    }

    // s_new = f(s_prev, x).
    template <class T>
    FLASHRNN_HOST_DEVICE static void forward(const T* x, const T* p, const T* s_prev, T* s_new) {
        using math::tanh;
        const T f_gate = sigmoid(x[f] + p[a_f] * s_prev[h] + p[c_f] * s_prev[c]);
        const T candidate = tanh(p[a_z] * s_prev[h] + x[z]);
        const T c_new = candidate + f_gate * (s_prev[c] - candidate);
        const T o_gate = sigmoid(x[o] + p[a_o] * s_prev[h] + p[c_o] * c_new);
        s_new[c] = c_new;
        s_new[h] = o_gate * tanh(c_new);
    }

    // s_new = f(0, x), Newton's initial guess (eq. 10): forward at a zero state without its terms (the
    // fused Newton forward makes it at every step but a tile's first, and is instruction-bound).
    template <class T> FLASHRNN_HOST_DEVICE static void forward_from_zero(const T* x, const T* p, T* s_new) {
        using math::tanh;
        const T f_gate = sigmoid(x[f]);
        const T candidate = tanh(x[z]);
        const T c_new = candidate - f_gate * candidate;
        s_new[c] = c_new;
        s_new[h] = sigmoid(x[o] + p[c_o] * c_new) * tanh(c_new);
    }

    // s_new = f(s_prev, x) and jacobian[i * num_states + j] = d s_new[i] / d s_prev[j].
    template <class T>
    FLASHRNN_HOST_DEVICE static void step(const T* x, const T* p, const T* s_prev, T* s_new, T* jacobian) {
        const Gates<T> g = gates(x, p, s_prev);
        s_new[c] = g.c_new;
        s_new[h] = g.o * g.tanh_c;
        const T forget_path = (s_prev[c] - g.z) * g.df;
        const T dc_dc = g.f + forget_path * p[c_f];
        const T input_dz = g.dz - g.f * g.dz; // (1 - f) tanh'(z^): one FMA of two values, not of a_z twice
        const T dc_dh = forget_path * p[a_f] + input_dz * p[a_z];
        const T output_path = s_new[h] - s_new[h] * g.o; // tanh(c') sigmoid'(o^) = h' (1 - o)
        const T o_dtanh_c = g.o - s_new[h] * g.tanh_c;   // o tanh'(c') = o - o tanh(c')^2
        const T dh_dc_new = output_path * p[c_o] + o_dtanh_c;
        jacobian[h * num_states + h] = output_path * p[a_o] + dh_dc_new * dc_dh;
        jacobian[h * num_states + c] = dh_dc_new * dc_dc;
        jacobian[c * num_states + h] = dc_dh;
        jacobian[c * num_states + c] = dc_dc;
    }

    // ds_new: the gradient of the loss with respect to s_new. Writes the gradients with respect to the
    // input projections (d_x), the diagonal parameters (d_p, this step's contribution) and the previous
    // states (ds_prev = jacobian^T ds_new).
    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* x, const T* p, const T* s_prev, const T* ds_new,
                                              T* d_x, T* d_p, T* ds_prev) {
        const Gates<T> g = gates(x, p, s_prev);
        const T d_o_pre = ds_new[h] * g.tanh_c * g.do_;
        const T d_c_new = ds_new[c] + ds_new[h] * g.o * g.dtanh_c + d_o_pre * p[c_o];
        const T d_f_pre = d_c_new * (s_prev[c] - g.z) * g.df;
        const T d_z_pre = d_c_new * (T(1) - g.f) * g.dz;
        d_x[f] = d_f_pre;
        d_x[z] = d_z_pre;
        d_x[o] = d_o_pre;
        d_p[a_f] = d_f_pre * s_prev[h];
        d_p[a_z] = d_z_pre * s_prev[h];
        d_p[a_o] = d_o_pre * s_prev[h];
        d_p[c_f] = d_f_pre * s_prev[c];
        d_p[c_o] = d_o_pre * g.c_new;
        ds_prev[h] = d_f_pre * p[a_f] + d_z_pre * p[a_z] + d_o_pre * p[a_o];
        ds_prev[c] = d_c_new * g.f + d_f_pre * p[c_f];
    }
};

} // namespace flashrnn::cells

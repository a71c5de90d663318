// FlashGRU (Danieli et al., "ParaRNN", eq. 7a with the diagonal state matrices of eq. 9): a GRU whose
// units never mix, so that its Jacobian with respect to the previous state is diagonal and Newton's
// method can solve the whole sequence in parallel (the newton module). Per unit:
//
//   z  = sigmoid(a_z h + x_z)                  (the update gate)
//   r  = sigmoid(a_r h + x_r)                  (the reset gate)
//   c  = tanh(a_c (h r) + x_c)                 (the candidate)
//   h' = (1 - z) h + z c
//
// x_* are the precomputed input projections B_* x + b_* (one input row per gate), a_* the diagonals of
// the state matrices A_*. The Jacobian, derived from the equations (the paper's eq. 8 is garbled):
//
//   dh'/dh = (1 - z) + (c - h) sigmoid'(z^) a_z + z tanh'(c^) a_c (r + h sigmoid'(r^) a_r)
//
// where v^ is the pre-activation of v.
#pragma once

#if !defined(__CUDACC_RTC__) // names are host-side metadata; NVRTC has no standard library
#include <array>
#include <string_view>
#endif

#include "flashrnn/cells/activations.hpp"
#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::cells {

struct FlashGru {
#if !defined(__CUDACC_RTC__)
    static constexpr std::string_view name = "flash_gru";
#endif
    enum State : int { h = 0 };
    enum Gate : int { z = 0, r = 1, c = 2 };            // rows of the input projections
    enum Parameter : int { a_z = 0, a_r = 1, a_c = 2 }; // rows of the diagonal parameters
    static constexpr int num_states = 1;
    static constexpr int num_gates = 3;
    static constexpr int num_parameters = 3;
#if !defined(__CUDACC_RTC__)
    static constexpr std::array<std::string_view, num_states> state_names{"h"};
    static constexpr std::array<std::string_view, num_gates> gate_names{"z", "r", "c"};
    static constexpr std::array<std::string_view, num_parameters> parameter_names{"a_z", "a_r", "a_c"};
#endif

    // The gates' values and the derivatives of their activations at the pre-activations.
    template <class T> struct Gates { T z, r, c, dz, dr, dc; };

    template <class T> FLASHRNN_HOST_DEVICE static Gates<T> gates(const T* x, const T* p, T h_prev) {
        using math::tanh;
        Gates<T> g;
        g.z = sigmoid(p[a_z] * h_prev + x[z]);
        g.r = sigmoid(p[a_r] * h_prev + x[r]);
        g.c = tanh(p[a_c] * h_prev * g.r + x[c]);
        g.dz = sigmoid_derivative_from_output(g.z);
        g.dr = sigmoid_derivative_from_output(g.r);
        g.dc = tanh_derivative_from_output(g.c);
        return g;
    }

    // s_new = f(s_prev, x).
    template <class T>
    FLASHRNN_HOST_DEVICE static void forward(const T* x, const T* p, const T* s_prev, T* s_new) {
        using math::tanh;
        const T z_gate = sigmoid(p[a_z] * s_prev[h] + x[z]);
        const T r_gate = sigmoid(p[a_r] * s_prev[h] + x[r]);
        const T candidate = tanh(p[a_c] * s_prev[h] * r_gate + x[c]);
        s_new[h] = (T(1) - z_gate) * s_prev[h] + z_gate * candidate;
    }

    // s_new = f(0, x), Newton's initial guess (eq. 10): forward at a zero state without its terms (the
    // fused Newton forward makes it at every step but a tile's first, and is instruction-bound).
    template <class T> FLASHRNN_HOST_DEVICE static void forward_from_zero(const T* x, const T*, T* s_new) {
        using math::tanh;
        s_new[h] = sigmoid(x[z]) * tanh(x[c]);
    }

    // s_new = f(s_prev, x) and jacobian = ds_new / ds_prev (row-major num_states x num_states: one value).
    template <class T>
    FLASHRNN_HOST_DEVICE static void step(const T* x, const T* p, const T* s_prev, T* s_new, T* jacobian) {
        const T hp = s_prev[h];
        const Gates<T> g = gates(x, p, hp);
        s_new[h] = (T(1) - g.z) * hp + g.z * g.c;
        jacobian[0] =
            (T(1) - g.z) + (g.c - hp) * g.dz * p[a_z] + g.z * g.dc * p[a_c] * (g.r + hp * g.dr * p[a_r]);
    }

    // ds_new: the gradient of the loss with respect to s_new. Writes the gradients with respect to the
    // input projections (d_x), the diagonal parameters (d_p, this step's contribution) and the previous
    // state (ds_prev = jacobian^T ds_new).
    template <class T>
    FLASHRNN_HOST_DEVICE static void backward(const T* x, const T* p, const T* s_prev, const T* ds_new,
                                              T* d_x, T* d_p, T* ds_prev) {
        const T hp = s_prev[h];
        const Gates<T> g = gates(x, p, hp);
        const T dh = ds_new[h];
        const T d_z_pre = dh * (g.c - hp) * g.dz;
        const T d_c_pre = dh * g.z * g.dc;
        const T d_r_pre = d_c_pre * p[a_c] * hp * g.dr;
        d_x[z] = d_z_pre;
        d_x[r] = d_r_pre;
        d_x[c] = d_c_pre;
        d_p[a_z] = d_z_pre * hp;
        d_p[a_r] = d_r_pre * hp;
        d_p[a_c] = d_c_pre * hp * g.r;
        ds_prev[h] = dh * (T(1) - g.z) + d_z_pre * p[a_z] + d_r_pre * p[a_r] + d_c_pre * p[a_c] * g.r;
    }
};

} // namespace flashrnn::cells

// Parameters of the alternating backend's per-step kernels (step_kernels.cuh), plain structs passed
// by value to each launch.
#pragma once

#include <cstdint>

#include "cuda/rnn/recurrent_gradient_policy.hpp"
#include "flashrnn/detail/host_device.hpp"
#include "flashrnn/rnn/layout.hpp"

namespace flashrnn::alternating {

// Where the units of one step live: B x NH x DH, walked as vectors of V along DH.
struct UnitGrid {
    std::int64_t batch, heads, head_dim;
    std::int64_t vectors; // batch * heads * head_dim / V
    int chunks;           // vectors per thread

    struct Unit {
        std::int64_t b, h, d;
    };
    FLASHRNN_HOST_DEVICE Unit unit_of(std::int64_t vector, int width) const {
        const std::int64_t per_row = head_dim / width;
        const std::int64_t row = vector / per_row; // b * NH + h
        return {row / heads, row % heads, (vector % per_row) * width};
    }
    // Offset of (b, h, slot, d) in a per-step [B, NH, slots, DH] buffer.
    FLASHRNN_HOST_DEVICE std::int64_t slot_offset(const Unit& u, int slots, int slot) const {
        return ((u.b * heads + u.h) * slots + slot) * head_dim + u.d;
    }
};

struct ForwardStep {
    UnitGrid grid;
    GateInputsLayout input_layout;
    BiasLayout bias_layout;
    StateSequenceLayout sequence;
    StatesLayout single;
    std::int64_t t; // computes states t+1 from states t
    const void* gate_inputs;
    const void* bias;
    const float* recurrent; // this step's R s_t, [B, NH, G_rec, DH]
    void* states;
    void* last_state;  // written at the last step when not null
    float* gate_cache; // [T, B, NH, G, DH] in slot order, or null
};

struct BackwardStep {
    UnitGrid grid;
    GateInputsLayout input_layout;
    StateSequenceLayout sequence;
    StatesLayout single;
    std::int64_t t; // differentiates the step from states t-1 to states t (1 <= t <= T)
    const void* states;
    const float* gate_cache;  // [T, B, NH, G, DH], slot order
    const void* d_states;     // optional [S, T+1, B, NH, DH]
    const void* d_last_state; // optional [S, B, NH, DH]
    const float* through_r;   // R^T dg of step t+1 [B, NH, parts, DH], null at t = T or when cut
    int through_r_parts;      // summed by the kernel (recurrent_products.hpp)
    RecurrentGradientPolicy policy;
    float* carry;        // [S, B, NH, DH]: pointwise gradient to the states of step t
    void* d_gate_inputs; // layout of Wx
    void* d_gates;       // [T, B, NH, G, DH] in slot order
};

// After the last backward step: the gradient of the initial states = the carry + R^T dg of step 1
// (after the policy) + the upstream gradient of states[:, 0]. With T = 0 steps there is none.
struct InitialStatesGradient {
    UnitGrid grid; // V = 1
    StateSequenceLayout sequence;
    StatesLayout single;
    int num_states;
    const float* carry;
    const float* through_r; // [B, NH, parts, DH], null when cut
    int through_r_parts;
    RecurrentGradientPolicy policy;
    const void* d_states;
    void* d_initial_states;
};

} // namespace flashrnn::alternating

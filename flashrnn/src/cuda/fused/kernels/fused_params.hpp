// The fused kernels' launch parameters, seen by the host (fused_backend.cpp) and by the kernels
// compiled with NVRTC (which has no standard library: plain types only). Their shared-memory layout
// and step exchange are those the tiling model counts (tiling/fused_layout.hpp).
#pragma once

#include "cuda/rnn/recurrent_gradient_policy.hpp"
#include "flashrnn/detail/host_device.hpp"
#include "flashrnn/rnn/layout.hpp"
#include "tiling/fused_layout.hpp"

namespace flashrnn::fused {

// The per-step gate buffers of both backends (the gate cache, the gate gradients):
// [T, B, NH, slots, DH], the gates in slot order (cuda/alternating/gate_slots.hpp).
struct GateSlotsLayout {
    LayoutIndex batch, heads, slots, head_dim;
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex t, LayoutIndex b, LayoutIndex h,
                                                      LayoutIndex slot, LayoutIndex d) const {
        return (((t * batch + b) * heads + h) * slots + slot) * head_dim + d;
    }
};

// The layouts of the API's tensors (flashrnn/layout.hpp), built on the host by tensor_shapes.hpp.
struct TensorLayouts {
    GateInputsLayout gate_inputs;
    RecurrentWeightsLayout recurrent_weights;
    BiasLayout bias;
    StatesLayout single;          // initial states, last state and their gradients
    StateSequenceLayout sequence; // all states and their gradient
    GateSlotsLayout gate_slots;
};

struct ForwardParams {
    TensorLayouts layouts;
    const void* gate_inputs;
    const void* recurrent_weights;
    const void* bias;
    const void* initial_states;
    void* states;                 // out
    void* last_state;             // out, or null
    float* gate_cache;            // out (fp32), or null
    unsigned long long* exchange; // zeroed; the step exchange of the groups that split a head
    int head_offset;              // the first head of this launch
    int batch_chunk;              // the chunk of each block's batch this launch runs
};

struct BackwardParams {
    TensorLayouts layouts;
    const void* recurrent_weights;
    const void* states;       // the forward's
    const float* gate_cache;  // the forward's (fp32)
    const void* d_states;     // upstream, or null
    const void* d_last_state; // upstream, or null
    void* d_gate_inputs;      // out, layout of Wx
    void* d_gates;            // out, gate slots layout (for dR and db)
    void* d_initial_states;   // out
    unsigned long long* exchange;
    int head_offset;
    int batch_chunk;
    alternating::RecurrentGradientPolicy policy;
    int cut; // no gradient through R
};

} // namespace flashrnn::fused

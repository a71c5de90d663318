// The fused kernels' launch parameters and shared-memory layout, seen by the host (fused_backend.cpp)
// and by the kernels compiled with NVRTC (which has no standard library: plain types only).
#pragma once

#include "cuda/rnn/recurrent_gradient_policy.hpp"
#include "flashrnn/detail/host_device.hpp"
#include "flashrnn/rnn/layout.hpp"

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
    alternating::RecurrentGradientPolicy policy;
    int cut; // no gradient through R
};

// The step exchange of a group of blocks that split a head (fused_exchange.cuh), in 64-bit words.
// Tagged: a 32-bit exchange number and 2 values (16-bit types) or 1 (fp32) per word, two parities of
// every batch row's k_length values (the operand: forward the state, backward the gate gradients).
// Otherwise: the group's barrier counter.
template <class Traits> FLASHRNN_HOST_DEVICE constexpr int exchange_values_per_word(const Traits& t) {
    return t.element_bytes == 4 ? 1 : 2;
}
template <class Traits> FLASHRNN_HOST_DEVICE constexpr long long exchange_words_per_group(const Traits& t) {
    if (!t.tagged_exchange) return 1;
    return 2LL * t.batch_tiles_per_block * t.mma_n * (t.k_length / exchange_values_per_word(t));
}

// Elements of padding after each batch row of the operand buffer: rows then start 16 bytes apart
// modulo 128, so the eight rows a B fragment reads fall on different banks.
template <class Traits> FLASHRNN_HOST_DEVICE constexpr int operand_padding(const Traits& t) {
    return t.element_bytes == 4 ? 4 : 8;
}

// The dynamic shared memory of one block, in this order (all offsets multiples of 16 bytes):
// R tiles not held in registers (one 16-byte fragment per lane), the operand (the previous state
// forward, the gate gradients backward) as [batch row][k], the fp32 products of each k warp as
// [k warp][batch row][row], the fp32 states (forward) or state gradients (backward) of the
// block's units as [state][batch row][unit], and (forward) the fp32 bias of the units as
// [gate][unit]. The tiling model (fused_tiling.cpp) counts the same bytes.
struct SharedLayout {
    long long r_tiles, operand, partials, states, bias, total;
};

FLASHRNN_HOST_DEVICE constexpr long long round_up_16(long long bytes) {
    return (bytes + 15) / 16 * 16;
}

template <class Traits>
FLASHRNN_HOST_DEVICE constexpr SharedLayout shared_layout(const Traits& t, bool forward) {
    const long long batch_rows = (long long)t.batch_tiles_per_block * t.mma_n;
    const long long r_bytes =
        (long long)t.row_warps * t.k_warps * t.row_tiles_per_warp * t.k_tiles_in_shared_memory * 32 * 16;
    const long long operand_bytes =
        ((long long)t.k_tiles_per_block * t.mma_k + operand_padding(t)) * batch_rows * t.element_bytes;
    const long long partial_bytes = 4LL * t.k_warps * batch_rows * t.row_tiles_per_block * t.mma_m;
    const long long state_bytes = 4LL * t.num_states * batch_rows * t.units_per_block;
    const long long bias_bytes = forward ? 4LL * t.num_gates * t.units_per_block : 0;
    SharedLayout layout{0, 0, 0, 0, 0, 0};
    layout.r_tiles = 0;
    layout.operand = layout.r_tiles + round_up_16(r_bytes);
    layout.partials = layout.operand + round_up_16(operand_bytes);
    layout.states = layout.partials + round_up_16(partial_bytes);
    layout.bias = layout.states + round_up_16(state_bytes);
    layout.total = layout.bias + round_up_16(bias_bytes);
    return layout;
}

} // namespace flashrnn::fused

// The fused kernels' launch parameters and shared-memory layout, seen by the host (fused_backend.cpp)
// and by the kernels compiled with NVRTC (which has no standard library: plain types only).
#pragma once

#include "flashrnn/host_device.hpp"

namespace flashrnn::fused {

struct ForwardParams {
    const void* gate_inputs;       // Wx [T, B, G_in, NH, DH] or [B, T, G_in, NH, DH]
    const void* recurrent_weights; // R  [G_rec, NH, DH, DH]
    const void* bias;              // b  [G, NH, DH]
    const void* initial_states;    // [S, B, NH, DH]
    void* states;                  // out [S, T+1, B, NH, DH]
    void* last_state;              // out [S, B, NH, DH], or null
    float* gate_cache;             // out [T, B, NH, G, DH] in slot order (fp32), or null
    unsigned* barriers;            // one zeroed counter per group of blocks that share a head
    long long time_steps;
    int batch, heads, head_offset; // head_offset: the first head of this launch
    int batch_first;
};

struct BackwardParams {
    const void* recurrent_weights; // R [G_rec, NH, DH, DH]
    const void* states;            // the forward's [S, T+1, B, NH, DH]
    const float* gate_cache;       // the forward's [T, B, NH, G, DH] (fp32, slot order)
    const void* d_states;          // upstream [S, T+1, B, NH, DH], or null
    const void* d_last_state;      // upstream [S, B, NH, DH], or null
    void* d_gate_inputs;           // out, layout of Wx
    void* d_gates;                 // out [T, B, NH, G, DH] in slot order (for dR and db)
    void* d_initial_states;        // out [S, B, NH, DH]
    unsigned* barriers;
    long long time_steps;
    int batch, heads, head_offset;
    int batch_first;
    int clip, cut;                 // the recurrent-gradient policy
    float clip_value;
};

// Elements of padding after each batch row of the operand buffer: rows then start 16 bytes apart
// modulo 128, so the eight rows a B fragment reads fall on different banks.
template <class Traits> FLASHRNN_HOST_DEVICE constexpr int operand_padding(const Traits& t) { return t.element_bytes == 4 ? 4 : 8; }

// The dynamic shared memory of one block, in this order (all offsets multiples of 16 bytes):
// R tiles not held in registers (one 16-byte fragment per lane), the operand (the previous state
// forward, the gate gradients backward) as [batch row][k], the fp32 products of each k warp as
// [k warp][batch row][row], and the fp32 states (forward) or state gradients (backward) of the
// block's units as [state][batch row][unit].
struct SharedLayout {
    long long r_tiles, operand, partials, states, total;
};

FLASHRNN_HOST_DEVICE constexpr long long round_up_16(long long bytes) { return (bytes + 15) / 16 * 16; }

template <class Traits> FLASHRNN_HOST_DEVICE constexpr SharedLayout shared_layout(const Traits& t) {
    const long long batch_rows = (long long)t.batch_tiles_per_block * t.mma_n;
    const long long r_bytes = (long long)t.row_warps * t.k_warps * t.row_tiles_per_warp * t.k_tiles_in_shared_memory * 32 * 16;
    const long long operand_bytes =
        ((long long)t.k_tiles_per_block * t.mma_k + operand_padding(t)) * batch_rows * t.element_bytes;
    const long long partial_bytes = 4LL * t.k_warps * batch_rows * t.row_tiles_per_block * t.mma_m;
    const long long state_bytes = 4LL * t.num_states * batch_rows * t.units_per_block;
    SharedLayout layout{0, 0, 0, 0, 0};
    layout.r_tiles = 0;
    layout.operand = layout.r_tiles + round_up_16(r_bytes);
    layout.partials = layout.operand + round_up_16(operand_bytes);
    layout.states = layout.partials + round_up_16(partial_bytes);
    layout.total = layout.states + round_up_16(state_bytes);
    return layout;
}

} // namespace flashrnn::fused

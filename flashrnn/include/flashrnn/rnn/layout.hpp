// The memory layout of every tensor of the FlashRNN API (docs/kernels.md), as index functions used by
// the CPU reference and the kernels alike. All tensors are dense and row-major: the last dimension
// (DH) is contiguous.
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#endif

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn {

// The index type of the layouts: std::int64_t, or in the fused kernels compiled by NVRTC (no
// standard library) the 64-bit long long.
#if defined(__CUDACC_RTC__)
using LayoutIndex = long long;
#else
using LayoutIndex = std::int64_t;
#endif

// Gate inputs Wx and their gradient: [T, B, G_in, NH, DH] or, batch-first, [B, T, G_in, NH, DH].
struct GateInputsLayout {
    LayoutIndex time_steps, batch, gates, heads, head_dim;
    bool batch_first;

    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex t, LayoutIndex b, LayoutIndex g,
                                                      LayoutIndex h, LayoutIndex d) const {
        const LayoutIndex outer = batch_first ? b * time_steps + t : t * batch + b;
        return ((outer * gates + g) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex size() const {
        return time_steps * batch * gates * heads * head_dim;
    }
};

// Recurrent weights R: [G_rec, NH, DH, DH]. Block (g, h) is a DH x DH matrix whose row indexes the
// new gate unit and whose column indexes the previous state unit: gate g of head h receives
// R[g, h] @ s0_prev[h]. This is torch.nn.LSTM's weight_hh (rows = outputs) cut into heads.
struct RecurrentWeightsLayout {
    LayoutIndex gates, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex g, LayoutIndex h, LayoutIndex row,
                                                      LayoutIndex col) const {
        return ((g * heads + h) * head_dim + row) * head_dim + col;
    }
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex size() const { return gates * heads * head_dim * head_dim; }
};

// Bias b: [G, NH, DH].
struct BiasLayout {
    LayoutIndex gates, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex g, LayoutIndex h, LayoutIndex d) const {
        return (g * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex size() const { return gates * heads * head_dim; }
};

// One set of states (initial states, last state and their gradients): [S, B, NH, DH].
struct StatesLayout {
    LayoutIndex states, batch, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex s, LayoutIndex b, LayoutIndex h,
                                                      LayoutIndex d) const {
        return ((s * batch + b) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex size() const { return states * batch * heads * head_dim; }
};

// All states over time and their gradient: [S, T+1, B, NH, DH], time index 0 = initial states.
struct StateSequenceLayout {
    LayoutIndex states, time_steps, batch, heads, head_dim; // time_steps = T; the tensor holds T+1

    FLASHRNN_HOST_DEVICE constexpr LayoutIndex offset(LayoutIndex s, LayoutIndex t, LayoutIndex b,
                                                      LayoutIndex h, LayoutIndex d) const {
        return (((s * (time_steps + 1) + t) * batch + b) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr LayoutIndex size() const {
        return states * (time_steps + 1) * batch * heads * head_dim;
    }
};

} // namespace flashrnn

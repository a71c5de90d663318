// The memory layout of every tensor of the FlashRNN API (docs/kernels.md), as index functions used by
// the CPU reference and the kernels alike. All tensors are dense and row-major: the last dimension
// (DH) is contiguous.
#pragma once

#include <cstdint>

#include "flashrnn/host_device.hpp"

namespace flashrnn {

// Gate inputs Wx and their gradient: [T, B, G_in, NH, DH] or, batch-first, [B, T, G_in, NH, DH].
struct GateInputsLayout {
    std::int64_t time_steps, batch, gates, heads, head_dim;
    bool batch_first;

    FLASHRNN_HOST_DEVICE constexpr std::int64_t offset(std::int64_t t, std::int64_t b, std::int64_t g,
                                                       std::int64_t h, std::int64_t d) const {
        const std::int64_t outer = batch_first ? b * time_steps + t : t * batch + b;
        return ((outer * gates + g) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr std::int64_t size() const {
        return time_steps * batch * gates * heads * head_dim;
    }
};

// Recurrent weights R: [G_rec, NH, DH, DH]. Block (g, h) is a DH x DH matrix whose row indexes the
// new gate unit and whose column indexes the previous state unit: gate g of head h receives
// R[g, h] @ s0_prev[h]. This is torch.nn.LSTM's weight_hh (rows = outputs) cut into heads.
struct RecurrentWeightsLayout {
    std::int64_t gates, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr std::int64_t offset(std::int64_t g, std::int64_t h, std::int64_t row,
                                                       std::int64_t col) const {
        return ((g * heads + h) * head_dim + row) * head_dim + col;
    }
    FLASHRNN_HOST_DEVICE constexpr std::int64_t size() const { return gates * heads * head_dim * head_dim; }
};

// Bias b: [G, NH, DH].
struct BiasLayout {
    std::int64_t gates, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr std::int64_t offset(std::int64_t g, std::int64_t h, std::int64_t d) const {
        return (g * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr std::int64_t size() const { return gates * heads * head_dim; }
};

// One set of states (initial states, last state and their gradients): [S, B, NH, DH].
struct StatesLayout {
    std::int64_t states, batch, heads, head_dim;

    FLASHRNN_HOST_DEVICE constexpr std::int64_t offset(std::int64_t s, std::int64_t b, std::int64_t h,
                                                       std::int64_t d) const {
        return ((s * batch + b) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr std::int64_t size() const { return states * batch * heads * head_dim; }
};

// All states over time and their gradient: [S, T+1, B, NH, DH], time index 0 = initial states.
struct StateSequenceLayout {
    std::int64_t states, time_steps, batch, heads, head_dim; // time_steps = T; the tensor holds T+1

    FLASHRNN_HOST_DEVICE constexpr std::int64_t offset(std::int64_t s, std::int64_t t, std::int64_t b,
                                                       std::int64_t h, std::int64_t d) const {
        return (((s * (time_steps + 1) + t) * batch + b) * heads + h) * head_dim + d;
    }
    FLASHRNN_HOST_DEVICE constexpr std::int64_t size() const {
        return states * (time_steps + 1) * batch * heads * head_dim;
    }
};

} // namespace flashrnn

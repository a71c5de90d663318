// The order of a cell's gates in the alternating backend's per-unit gate buffers (the gate cache
// and the gate gradients): the gates that have a block of R first, in block order, then the gates
// without one, in gate order. The recurrent products then read or write the first G_rec slots of
// each head as one contiguous [G_rec * DH] row. For LSTM, sLSTM and Elman slot = gate; for the GRU
// the slots are r, z, hn, n. The fused kernels (compiled by NVRTC) share this header: no library
// includes beyond host_device.hpp.
#pragma once

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::alternating {

template <class C> FLASHRNN_HOST_DEVICE constexpr bool has_recurrent_block(int gate) {
    for (int k = 0; k < C::num_recurrent_gates; ++k)
        if (C::gate_of_recurrent_block(k) == gate) return true;
    return false;
}

template <class C> FLASHRNN_HOST_DEVICE constexpr int gate_of_slot(int slot) {
    if (slot < C::num_recurrent_gates) return C::gate_of_recurrent_block(slot);
    int extra = slot - C::num_recurrent_gates;
    for (int g = 0; g < C::num_gates; ++g)
        if (!has_recurrent_block<C>(g) && extra-- == 0) return g;
    return -1;
}

} // namespace flashrnn::alternating

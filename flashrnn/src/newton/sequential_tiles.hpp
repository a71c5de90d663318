// The sequential kernels' shared-memory tiles (cuda/newton/sequential.cuh), written once for the
// kernels and the cost model that counts their resident warps (backend.cpp). A warp stages tiles of
// its 32 sequences x `steps` steps: per plane of values (a slot), one row per sequence, padded by one
// 4-byte word; two buffers (the tile it steps through, the next one in flight).
#pragma once

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::newton {

constexpr int kSequentialTileSequences = 32; // a warp's, one per thread
constexpr int kSequentialTileBuffers = 2;
// Steps per tile: 32 forward (rows of 128 bytes in fp32, 64 in bf16), 16 backward (it stages 5 or 7
// planes where the forward stages 3: 21-30 KiB of shared memory per warp in fp32, under the 48 KiB of a
// static allocation). Measured on the H200 (2026-12-03, newton_bench, FlashGRU and FlashLSTM, fp32 and
// bf16): rows of one 32-byte sector, with 3-4x the resident warps, took 5-15% longer forward and 30%
// longer forward+backward; 64 bf16 steps forward (128-byte rows) 10% less at B 1, but 1.2-1.3x longer at
// B 32 x 2048 units (half the resident warps).
constexpr int kSequentialForwardSteps = 32;
constexpr int kSequentialBackwardSteps = 16;
FLASHRNN_HOST_DEVICE constexpr int sequential_tile_steps(bool backward) {
    return backward ? kSequentialBackwardSteps : kSequentialForwardSteps;
}

// 4-byte words of one padded row: `steps` values of `value_bytes`, and one word more, so that the 32
// threads' reads of one step (a row each) fall in 32 banks.
FLASHRNN_HOST_DEVICE constexpr int sequential_row_words(int value_bytes, int steps) {
    return steps * value_bytes / 4 + 1;
}
// Slots: the forward's gates (the states leave through them); the backward's gates (their gradients
// leave through them), the states and the states' gradients.
FLASHRNN_HOST_DEVICE constexpr int sequential_forward_slots(int gates) {
    return gates;
}
FLASHRNN_HOST_DEVICE constexpr int sequential_backward_slots(int gates, int states) {
    return gates + 2 * states;
}
// One buffer's words, and a warp's (= a block's) shared memory.
FLASHRNN_HOST_DEVICE constexpr int sequential_buffer_words(int value_bytes, int steps, int slots) {
    return slots * kSequentialTileSequences * sequential_row_words(value_bytes, steps);
}
FLASHRNN_HOST_DEVICE constexpr int sequential_tile_bytes(int value_bytes, int steps, int slots) {
    return kSequentialTileBuffers * sequential_buffer_words(value_bytes, steps, slots) * 4;
}

} // namespace flashrnn::newton

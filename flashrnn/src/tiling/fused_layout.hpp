// The memory the fused kernels derive from their configuration, written once for both sides: the
// tiling model counts it over ConstrINT terms (fused_tiling.cpp) and the kernels and their host side
// lay it out over integers (cuda/fused/kernels/fused_params.hpp). The kernels are compiled by NVRTC
// too: no standard library here.
//
// `Sizes` is anything with the members of flashrnn::FusedKernelTraits used below: the traits, the
// generated `FusedTraits` of a kernel, or the model's variables. The problem's constants (mma shape,
// element bytes, the cell's states and gates, k_length) are plain integers; the tiling's sizes may be
// terms, added and multiplied as `Number`.
#pragma once

#include "flashrnn/detail/host_device.hpp"

namespace flashrnn::fused {

// Elements of padding after each batch row of the operand buffer: rows then start 16 bytes apart
// modulo 128, so the eight rows a B fragment reads fall on different banks.
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr int operand_padding(const Sizes& t) {
    return t.element_bytes == 4 ? 4 : 8;
}

// The backward's direct load of R (FusedKernelTraits::direct_r_load) copies each tile through a
// scratch of one 16 x 16 tile of 16-bit elements per warp, in the operand buffer of one chunk before
// the first step: it fits where that buffer has room for every warp's.
constexpr int kDirectLoadScratchElements = 16 * 16;
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr bool direct_load_scratch_fits(const Sizes& t) {
    const long long operand_elements =
        static_cast<long long>(t.batch_tiles_per_block) * t.mma_n *
        (static_cast<long long>(t.k_tiles_per_block) * t.mma_k + operand_padding(t));
    return operand_elements >=
           static_cast<long long>(t.threads_per_block / t.warp_size) * kDirectLoadScratchElements;
}

// The fp32 partial products of a block are [k warp][batch row][row]; each batch row holds the block's
// rows and 4 more: an mma's accumulators go to batch rows 2 quad and 2 quad + 1 at rows group (+ 8), so
// with rows a multiple of 32 apart (16 x row tiles) a warp's four quads would store to the same eight
// banks (4-way conflicts, measured with ncu on the H200: 70% of the store wavefronts at (1, 768), B 256);
// 4 more put quad q on banks 8 q .. 8 q + 7. Four floats keep every row of 16 bytes aligned (the
// forward's four gates of a unit are read as one 16-byte word).
constexpr int kPartialsRowPadding = 4;
template <class Number, class Sizes>
FLASHRNN_HOST_DEVICE constexpr Number partials_row_stride(const Sizes& t) {
    return t.mma_m * Number(t.row_tiles_per_block) + kPartialsRowPadding;
}

template <class Number> FLASHRNN_HOST_DEVICE constexpr Number round_up_16(const Number& bytes) {
    return (bytes + 15) / 16 * 16;
}

// The bytes of each part of a block's dynamic shared memory: R tiles not held in registers (one
// mma_m x mma_k tile as a warp's A fragments: 16 bytes per lane), the operand (the previous state
// forward, the gate gradients backward) as [buffer][batch row][k] with padded rows, the fp32 products of each
// k warp as [k warp][batch row][row] with padded rows (partials_row_stride), the fp32 states (forward) or
// state gradients (backward) of the block's units as [chunk][state][batch row][unit] (every chunk's when the
// chunks run inside each step, else one), and (forward) the fp32 bias of the units as [gate][unit].
template <class Number> struct SharedParts { Number r_tiles, operand, partials, states, bias; };

// The chunks whose states a block holds at once: all of them when they run inside each step.
template <class Number, class Sizes> FLASHRNN_HOST_DEVICE constexpr Number chunks_on_chip(const Sizes& t) {
    return Number(1) + Number(t.chunks_in_step) * (Number(t.batch_chunks) - 1);
}

// The operand buffers of a block: two with the cluster exchange (the peers write step t + 1's while
// the block may still read step t's) or with the chunks' prefetch (chunk c + 1's gathered while chunk
// c's product reads its own; the two never together: the cluster exchange runs one chunk), else one.
template <class Number, class Sizes> FLASHRNN_HOST_DEVICE constexpr Number operand_buffers(const Sizes& t) {
    return Number(1) + Number(t.cluster_exchange) + Number(t.prefetch_operand);
}

template <class Number, class Sizes>
FLASHRNN_HOST_DEVICE constexpr SharedParts<Number> shared_parts(const Sizes& t, bool forward) {
    const long long tile_bytes = (long long)t.mma_m * t.mma_k * t.element_bytes;
    const Number batch_rows = t.mma_n * Number(t.batch_tiles_per_block);
    return {tile_bytes * Number(t.row_warps) * t.k_warps * t.row_tiles_per_warp * t.k_tiles_in_shared_memory,
            (t.mma_k * Number(t.k_tiles_per_block) + operand_padding(t)) * batch_rows * t.element_bytes *
                operand_buffers<Number>(t),
            4LL * partials_row_stride<Number>(t) * Number(t.k_warps) * batch_rows,
            4LL * t.num_states * Number(t.units_per_block) * batch_rows * chunks_on_chip<Number>(t),
            forward ? 4LL * t.num_gates * Number(t.units_per_block) : Number(0)};
}

// The offsets of the parts, in that order, each part rounded up to 16 bytes (every offset a multiple
// of 16), and the total: the dynamic shared memory of one block.
template <class Number> struct SharedLayoutOf { Number r_tiles, operand, partials, states, bias, total; };
using SharedLayout = SharedLayoutOf<long long>;

template <class Number>
FLASHRNN_HOST_DEVICE constexpr SharedLayoutOf<Number> shared_layout_of(const SharedParts<Number>& parts) {
    const Number operand = round_up_16(parts.r_tiles);
    const Number partials = operand + round_up_16(parts.operand);
    const Number states = partials + round_up_16(parts.partials);
    const Number bias = states + round_up_16(parts.states);
    return {Number(0), operand, partials, states, bias, bias + round_up_16(parts.bias)};
}

template <class Number = long long, class Sizes>
FLASHRNN_HOST_DEVICE constexpr SharedLayoutOf<Number> shared_layout(const Sizes& t, bool forward) {
    return shared_layout_of(shared_parts<Number>(t, forward));
}

// The step exchange of a group of blocks that split a head (fused_exchange.cuh), in 64-bit words.
// Tagged: a 32-bit exchange number and 2 values (16-bit types) or 1 (fp32) per word, two parities of
// every batch row's k_length values (the operand: forward the state, backward the gate gradients).
// Otherwise: the group's barrier counter, and with the k split (k_blocks > 1) after it the k blocks'
// partial products, fp32 [k block][batch row][row of the head], two per word.
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr int exchange_values_per_word(const Sizes& t) {
    return t.element_bytes == 4 ? 1 : 2;
}
// The words of one exchange (one parity): what a block reads each step.
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr long long exchange_words_per_step(const Sizes& t) {
    return (long long)t.batch_tiles_per_block * t.mma_n * (t.k_length / exchange_values_per_word(t));
}
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr long long k_split_partial_floats(const Sizes& t) {
    return t.k_blocks > 1 ? (long long)t.k_blocks * t.batch_tiles_per_block * t.mma_n * t.rows : 0;
}
template <class Sizes> FLASHRNN_HOST_DEVICE constexpr long long exchange_words_per_group(const Sizes& t) {
    if (!t.tagged_exchange) return 1 + (k_split_partial_floats(t) + 1) / 2;
    return 2 * exchange_words_per_step(t);
}

} // namespace flashrnn::fused

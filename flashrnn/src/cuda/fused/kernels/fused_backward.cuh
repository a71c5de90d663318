// The fused backward kernel: one persistent launch for all time steps, last to first. Each block
// owns state units: it holds R^T's rows of them (every gate unit of the head is a column, unit-major:
// k = unit * G_rec + gate block) in registers and shared memory, applies the cell's derivative to its
// units and multiplies the gate gradients with R^T on the tensor cores for the gradient that flows
// to the previous h. The gate gradients are written out for the gradients of Wx, R and b; when a
// head spans several blocks, they go to all of its blocks through the step exchange
// (fused_exchange.cuh). A block whose batch runs in chunks inside each step (Traits::chunks_in_step)
// holds every chunk's fp32 carry and multiplies each chunk's gate gradients, taken from d_gates, at
// the start of the chunk's turn; one exchange (a barrier) ends the step. With the k split
// (kKSplit) a block holds R^T's rows of its units over its k block's gate columns only and gathers
// only those columns of the gate gradients; the row block's k blocks sum their partial products after
// a second barrier per step (KSplitSums), and each applies the derivative to its share of the items.
#pragma once

#include "cuda/rnn/gate_slots.hpp"
#include "fused_common.cuh"
#include "fused_exchange.cuh"

namespace flashrnn::fused {

extern "C" __global__ void __launch_bounds__(Traits::threads_per_block, 1)
    fused_backward(const __grid_constant__ BackwardParams p) {
    extern __shared__ __align__(16) unsigned char shared[];
    const TensorLayouts l = compiled_layouts(p.layouts);
    const Element* r = static_cast<const Element*>(p.recurrent_weights);
    const Element* states = static_cast<const Element*>(p.states);
    const Element* d_states = static_cast<const Element*>(p.d_states);
    const Element* d_last = static_cast<const Element*>(p.d_last_state);
    Element* d_inputs = static_cast<Element*>(p.d_gate_inputs);
    Element* d_gates = static_cast<Element*>(p.d_gates);
    OperandElement* operand = reinterpret_cast<OperandElement*>(shared + kShared.operand);
    float* partials = reinterpret_cast<float*>(shared + kShared.partials);
    float* all_carry = reinterpret_cast<float*>(shared + kShared.states); // [chunk][S][batch row][unit]

    const BlockPlace block(p.head_offset, p.batch_chunk);
    const int dh = Traits::head_dim, h = block.head, batch = Traits::batch;
    const long long T = l.sequence.time_steps;
    const bool through_r_flows = !p.cut;
    const int k_base = block.k_base; // the block's first gate column (kBlockColumns of them)
    // R^T: block row = state unit j, k = gate block * DH + gate unit (the gate slots' order, so that
    // a batch row of the operand is one contiguous row of the gate gradients); element R[block, head, unit,
    // j]. k is the block's: column k_base + k of the head.
    Product product;
    const auto r_at = [&](int row, int k) {
        const int column = k_base + k;
        return r + l.recurrent_weights.offset(column / dh, h, column % dh, block.unit_base + row);
    };
    const auto r_element = [&](int row, int k) {
        if (row >= kUnits || k_base + k >= Traits::k_length) return 0.0f;
        return to_float(*r_at(row, k));
    };
    // A k's rows (state units) are contiguous: 16-byte pieces through each warp's scratch, which the
    // operand buffer lends until it is zeroed below (traits_of takes the direct load where it fits).
    constexpr int kScratchElements = Traits::threads_per_block / kWarp * kDirectLoadScratchElements;
    static_assert(!Traits::direct_r_load || kOperandRows * kOperandStride >= kScratchElements,
                  "the operand buffer holds every warp's scratch (traits_of: direct_load_scratch_fits)");
    if constexpr (Traits::direct_r_load) {
        product.load_columns(
            r_element,
            [&](int row, int k) -> const Element* {
                if (row + 8 > kUnits || k_base + k >= Traits::k_length) return nullptr;
                const Element* at = r_at(row, k);
                return reinterpret_cast<unsigned long long>(at) % 16 == 0 ? at : nullptr;
            },
            reinterpret_cast<uint4*>(shared + kShared.r_tiles), operand);
        __syncthreads(); // every warp is done with its scratch before the operand is zeroed
    } else {
        product.load(r_element, reinterpret_cast<uint4*>(shared + kShared.r_tiles));
    }
    for (int i = threadIdx.x; i < kOperandRows * kOperandStride * operand_buffers<int>(Traits{});
         i += Traits::threads_per_block)
        operand[i] = to_operand(0.0f);
    for (int i = threadIdx.x; i < kStepChunks * kChunkStates; i += Traits::threads_per_block)
        all_carry[i] = 0.0f;
    // The barrier's gather shared by a cluster (fused_exchange.cuh): its transaction barrier in static
    // shared memory (one per operand buffer), initialised before the cluster's first barrier; the
    // peers copy into this block's operand only after it.
    unsigned long long* gather_barrier = nullptr;
    if constexpr (Traits::multicast_gather) {
        __shared__ __align__(8) unsigned long long arrived[MulticastGather::kBuffers];
        gather_barrier = arrived;
    }
    MulticastGather multicast(gather_barrier);
    if constexpr (Traits::multicast_gather)
        MulticastGather::start();
    else
        __syncthreads();

    // What step t's derivative reads besides the carry and R^T dg (none of it depends on the
    // recurrence): loaded one step ahead, so that its latency leaves the chain, and kept as loaded
    // (converted where used: a conversion next to the load would wait for it there).
    struct StepInputs {
        float gates[kItems][G];
        Element previous[kItems][S], next[kItems][S], upstream[kItems][S];
    };
    auto load_inputs = [&](long long t, const BlockPlace& place, StepInputs& in) {
        const Element zero = from_float(0.0f);
#pragma unroll
        for (int item = 0; item < kItems; ++item) {
            const PointwiseItem it(item, place);
            const bool load = it.live && t >= 1;
#pragma unroll
            for (int slot = 0; slot < G; ++slot)
                in.gates[item][alternating::gate_of_slot<Cell>(slot)] =
                    load ? p.gate_cache[l.gate_slots.offset(t - 1, it.b, h, slot, it.d)] : 0.0f;
#pragma unroll
            for (int s = 0; s < S; ++s) {
                in.previous[item][s] = load ? states[l.sequence.offset(s, t - 1, it.b, h, it.d)] : zero;
                in.next[item][s] = load ? states[l.sequence.offset(s, t, it.b, h, it.d)] : zero;
                in.upstream[item][s] =
                    load && d_states ? d_states[l.sequence.offset(s, t, it.b, h, it.d)] : zero;
            }
        }
    };

    // A split head: the gate gradients of step t of every unit come from the group's blocks, as
    // exchange T - t + 1 or from d_gates after the group's barrier.
    const StepExchange<G_REC * Traits::head_dim> exchange(p.exchange, block);
    unsigned* const barrier = reinterpret_cast<unsigned*>(exchange.words);
    unsigned arrivals = 0;
    const KSplitSums k_split(exchange.words);
    // R^T dg at (batch row n, unit) for the cell's derivative: the block's own product, or with the k
    // split every k block's after the group's barrier.
    const auto recurrent_gradient = [&](int n, int unit) {
        if constexpr (kKSplit)
            return k_split.at(n, unit, block);
        else
            return product_at(partials, n, unit);
    };
    // The operand of the gradient through R into step t: the gate gradients of step t + 1 of the
    // place's chunk, every unit of the head, from d_gates (written by the group's blocks before their
    // barrier).
    auto gate_gradient_rows = [&](long long t, const BlockPlace& place) {
        return [&, t, place](int n) -> const Element* {
            const int b = place.batch_base + n;
            return b < batch ? d_gates + l.gate_slots.offset(t, b, h, 0, 0) + k_base : nullptr;
        };
    };
    auto gather_gate_gradients = [&](long long t, const BlockPlace& place) {
        // gather_rows where the rows cannot travel as bulk copies (MulticastGather::issue).
        multicast.gather<kBlockColumns>(operand, gate_gradient_rows(t, place),
                                        min(kBatchRows, batch - place.batch_base));
    };
    // The barrier exchange without chunks: each k range's warps gather their columns and multiply
    // (not with the multicast gather, which a cluster shares and which was the faster at (1, 768) B 16).
    using Range = KRange<kBlockColumns>;
    constexpr bool kRangeGather = Range::kUsable && Traits::cooperative && !Traits::tagged_exchange &&
                                  !Traits::chunks_in_step && !Traits::multicast_gather;
    const Range range;
    // Chunks inside each step: R^T times the chunk's gate gradients of step t + 1, at its turn.
    auto chunk_product = [&](long long t, int chunk) {
        if constexpr (Traits::chunks_in_step) {
            OperandElement* const rows =
                multicast.chunk_operand(operand, chunk, [&](int c, OperandElement* into, unsigned buffer) {
                    const BlockPlace at = block.at_chunk(c);
                    multicast.issue<kBlockColumns>(into, gate_gradient_rows(t, at),
                                                   min(kBatchRows, batch - at.batch_base), buffer);
                });
            __syncthreads();
            product.run(rows, partials);
            __syncthreads();
            MulticastGather::done_reading();
        }
    };
    StepInputs upcoming;
    load_inputs(T, block.at_chunk(0), upcoming);
    for (long long t = T; t >= 1; --t) {
        for (int chunk = 0; chunk < kStepChunks; ++chunk) {
            const BlockPlace place = block.at_chunk(chunk);
            float* carry = all_carry + chunk * kChunkStates;
            // The product first: only this chunk's inputs are live across it (as in one chunk).
            if (through_r_flows && t < T) chunk_product(t, chunk);
            const StepInputs in = upcoming;
            if (chunk + 1 < kStepChunks)
                load_inputs(t, block.at_chunk(chunk + 1), upcoming);
            else
                load_inputs(t - 1, block.at_chunk(0), upcoming);
            // The cell's derivative at step t (states t-1 -> t) for the block's units.
            Element sent[kItems][G_REC]; // the gate gradients that multiply R^T, of each item
#pragma unroll
            for (int item = 0; item < kItems; ++item) {
                const PointwiseItem it(item, place);
#pragma unroll
                for (int k = 0; k < G_REC; ++k)
                    sent[item][k] = from_float(0.0f);
                if (!it.live) continue;
                const int n = it.n, unit = it.unit;
                float upstream[S], previous[S], next[S], d_gate[G], d_previous[S];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    upstream[s] =
                        to_float(in.upstream[item][s]) + carry[(s * kBatchRows + n) * kUnits + unit];
                    if (d_last && t == T) upstream[s] += to_float(d_last[l.single.offset(s, it.b, h, it.d)]);
                    previous[s] = to_float(in.previous[item][s]);
                    next[s] = to_float(in.next[item][s]);
                }
                if (through_r_flows && t < T) upstream[0] += p.policy.apply(recurrent_gradient(n, unit));
                Cell::backward(in.gates[item], previous, next, upstream, d_gate, d_previous);
#pragma unroll
                for (int s = 0; s < S; ++s)
                    carry[(s * kBatchRows + n) * kUnits + unit] = d_previous[s];
#pragma unroll
                for (int k = 0; k < Cell::num_input_gates; ++k)
                    d_inputs[l.gate_inputs.offset(t - 1, it.b, k, h, it.d)] =
                        from_float(d_gate[Cell::gate_of_input_row(k)]);
#pragma unroll
                for (int slot = 0; slot < G; ++slot) {
                    const Element out = from_float(d_gate[alternating::gate_of_slot<Cell>(slot)]);
                    d_gates[l.gate_slots.offset(t - 1, it.b, h, slot, it.d)] = out;
                    if (slot >= G_REC) continue;
                    sent[item][slot] = out;
                    if (kOperandStays)
                        operand[n * kOperandStride + slot * Traits::head_dim + it.d] =
                            to_operand(to_float(out));
                }
            }
            if constexpr (Traits::tagged_exchange) { // one chunk (tagged only without chunks in the step)
                if (through_r_flows) {
                    const unsigned number = static_cast<unsigned>(T - t + 1);
#pragma unroll
                    for (int item = 0; item < kItems; ++item) {
                        const PointwiseItem it(item, place);
#pragma unroll
                        for (int slot = 0; slot < G_REC; ++slot)
                            exchange.send(number, it.n, slot * Traits::head_dim + it.d, sent[item][slot],
                                          it.live);
                    }
                }
            }
        }
        if (!through_r_flows) continue;

        // The gradient through R for step t-1: R^T times every gate gradient of the head (chunks
        // inside each step: at each chunk's turn of step t-1, after the group's barrier).
        if (Traits::cooperative) {
            if constexpr (Traits::tagged_exchange) {
                exchange.receive(static_cast<unsigned>(T - t + 1), operand,
                                 [&](int n) { return block.batch_base + n < batch; });
            } else {
                arrivals += kGroupBlocks;
                group_barrier(barrier, arrivals);
                if constexpr (kRangeGather) {
                    const int first = range.first_column();
                    gather_rows<Range::kColumns, Range::kThreads>(
                        operand + first,
                        [&](int n) -> const Element* {
                            const int b = block.batch_base + n;
                            return b < batch
                                       ? d_gates + l.gate_slots.offset(t - 1, b, h, 0, 0) + k_base + first
                                       : nullptr;
                        },
                        range.rank);
                    range.sync();
                } else if constexpr (!Traits::chunks_in_step) {
                    gather_gate_gradients(t - 1, block);
                }
            }
        }
        if constexpr (!kRangeGather) __syncthreads();
        if constexpr (!Traits::chunks_in_step) {
            product.run(operand, partials);
            __syncthreads();
            if constexpr (kKSplit) { // every k block's sums, for the derivative of step t - 1
                k_split.publish(partials, block);
                arrivals += kGroupBlocks;
                group_barrier(barrier, arrivals);
            }
        }
    }
    __syncthreads(); // the carry of other threads' items (a cut gradient skips the loop's barriers)

    // The initial states' gradient: the carry, R^T dg of step 1 and the upstream gradient at t = 0.
    for (int chunk = 0; chunk < kStepChunks; ++chunk) {
        const BlockPlace place = block.at_chunk(chunk);
        const float* carry = all_carry + chunk * kChunkStates;
        if (through_r_flows) chunk_product(0, chunk);
        for (int i = threadIdx.x; i < kChunkStates; i += Traits::threads_per_block) {
            const int s = i / (kBatchRows * kUnits), n = (i / kUnits) % kBatchRows, unit = i % kUnits;
            const int b = place.batch_base + n, d = place.unit_base + unit;
            if (b >= batch || !PointwiseItem::owned(n, unit, place)) continue;
            float gradient = carry[i];
            if (s == 0 && through_r_flows) gradient += p.policy.apply(recurrent_gradient(n, unit));
            if (d_states) gradient += to_float(d_states[l.sequence.offset(s, 0, b, h, d)]);
            static_cast<Element*>(p.d_initial_states)[l.single.offset(s, b, h, d)] = from_float(gradient);
        }
    }
    MulticastGather::finish();
}

} // namespace flashrnn::fused

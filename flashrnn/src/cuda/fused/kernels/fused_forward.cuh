// The fused forward kernel: one persistent launch for all time steps. Each block holds its rows of R
// (gate units of its state units, every gate of them) in registers and shared memory for the whole
// launch, multiplies them with the previous state on the tensor cores each step and applies the
// cell to the products, the gate inputs and the bias. The fp32 states of its units never leave the
// block; the state that multiplies R is written out (the states tensor) and, when a head spans
// several blocks, sent to all of them through the step exchange (fused_exchange.cuh). A block whose
// batch runs in chunks inside each step (Traits::chunks_in_step) holds every chunk's fp32 states and
// takes each chunk's operand from the states tensor; one exchange (a barrier) ends the step. With the
// k split (kKSplit) a block holds its rows of R over its k block's state units only and gathers only
// those of the state; the row block's k blocks sum their partial products after a second barrier per
// step (KSplitSums), and each applies the cell to its share of the items.
#pragma once

#include "cuda/rnn/gate_slots.hpp"
#include "fused_common.cuh"
#include "fused_exchange.cuh"

namespace flashrnn::fused {

extern "C" __global__ void __launch_bounds__(Traits::threads_per_block, 1)
    fused_forward(const __grid_constant__ ForwardParams p) {
    extern __shared__ __align__(16) unsigned char shared[];
    const TensorLayouts l = compiled_layouts(p.layouts);
    const Element* wx = static_cast<const Element*>(p.gate_inputs);
    const Element* r = static_cast<const Element*>(p.recurrent_weights);
    const Element* bias = static_cast<const Element*>(p.bias);
    Element* states = static_cast<Element*>(p.states);
    // The operand of step t: one buffer, or two by parity with the cluster exchange (by chunk with
    // the chunks' prefetch, chosen by MulticastGather::chunk_operand).
    OperandElement* const operand = reinterpret_cast<OperandElement*>(shared + kShared.operand);
    constexpr int kOperandElements = kOperandRows * kOperandStride;
    auto operand_of = [&](long long t) {
        return Traits::cluster_exchange ? operand + (t & 1) * kOperandElements : operand;
    };
    float* partials = reinterpret_cast<float*>(shared + kShared.partials);
    float* all_cell_states = reinterpret_cast<float*>(shared + kShared.states); // [chunk][S][batch row][unit]

    const BlockPlace block(p.head_offset, p.batch_chunk);
    const int dh = Traits::head_dim, h = block.head, batch = Traits::batch;
    const long long T = l.sequence.time_steps;

    float* bias_of = reinterpret_cast<float*>(shared + kShared.bias); // [gate][unit], fp32

    // A split head: the state s0 at time t of every unit comes from the group's blocks, as exchange t
    // or from the states tensor after the group's barrier.
    const StepExchange<Traits::head_dim> exchange(p.exchange, block);
    // The cluster exchange's two transaction barriers: static shared memory of its kernels only.
    unsigned long long* cluster_barriers = nullptr;
    if constexpr (Traits::cluster_exchange) {
        __shared__ __align__(8) unsigned long long barriers[2];
        cluster_barriers = barriers;
    }
    const ClusterExchange cluster(cluster_barriers);
    // The barrier's gather shared by a cluster: its transaction barriers, static shared memory too.
    unsigned long long* gather_barrier = nullptr;
    if constexpr (Traits::multicast_gather) {
        __shared__ __align__(8) unsigned long long arrived[MulticastGather::kBuffers];
        gather_barrier = arrived;
    }
    MulticastGather multicast(gather_barrier);
    const int live_rows = min(kBatchRows, batch - block.batch_base);
    unsigned* const barrier = reinterpret_cast<unsigned*>(exchange.words);
    unsigned arrivals = 0;
    // The gate inputs of step t for this thread's items, as loaded: converted where they are used,
    // so that loads issued a step ahead are not waited for where they are issued.
    using StepInputs = Element[kItems][Cell::num_input_gates];
    auto load_inputs = [&](long long t, const BlockPlace& place, StepInputs& in) {
#pragma unroll
        for (int item = 0; item < kItems; ++item) {
            const PointwiseItem it(item, place);
#pragma unroll
            for (int k = 0; k < Cell::num_input_gates; ++k)
                in[item][k] =
                    it.live && t < T ? wx[l.gate_inputs.offset(t, it.b, k, h, it.d)] : from_float(0.0f);
        }
    };

    const int k_base = block.k_base; // the block's first state unit of k (kBlockColumns of them)
    const KSplitSums k_split(exchange.words);
    // R: block row = unit * G_rec + gate block, k = previous state unit k_base + k.
    Product product;
    const auto r_at = [&](int row, int k) {
        return r + l.recurrent_weights.offset(row % G_REC, h, block.unit_base + row / G_REC, k_base + k);
    };
    const auto r_element = [&](int row, int k) {
        if (row >= kUnits * G_REC || k_base + k >= dh) return 0.0f;
        return to_float(*r_at(row, k));
    };
    if constexpr (Traits::direct_r_load) { // a row's k are contiguous: the fragments' pairs are words of R
        product.load_pairs(
            r_element,
            [&](int row, int k) -> const Element* {
                if (row >= kUnits * G_REC || k_base + k + 2 > dh) return nullptr;
                const Element* at = r_at(row, k);
                return reinterpret_cast<unsigned long long>(at) % 4 == 0 ? at : nullptr;
            },
            reinterpret_cast<uint4*>(shared + kShared.r_tiles));
    } else {
        product.load(r_element, reinterpret_cast<uint4*>(shared + kShared.r_tiles));
    }

    for (int i = threadIdx.x; i < G * kUnits; i += Traits::threads_per_block)
        bias_of[i] = to_float(bias[l.bias.offset(i / kUnits, h, block.unit_base + i % kUnits)]);
    // The operand's padding (batch rows past B, k past DH) stays zero; the initial states are
    // copied to states[:, 0] and become the first operand.
    for (int i = threadIdx.x; i < kOperandElements * operand_buffers<int>(Traits{});
         i += Traits::threads_per_block)
        operand[i] = to_operand(0.0f);
    __syncthreads();
    for (int chunk = 0; chunk < kStepChunks; ++chunk) {
        const BlockPlace place = block.at_chunk(chunk);
        float* cell_states = all_cell_states + chunk * kChunkStates;
        for (int i = threadIdx.x; i < kBatchRows * kUnits; i += Traits::threads_per_block) {
            const int n = i / kUnits, unit = i % kUnits, b = place.batch_base + n, d = place.unit_base + unit;
            for (int s = 0; s < S; ++s) {
                float value = 0.0f;
                if (b < batch) {
                    const Element x =
                        static_cast<const Element*>(p.initial_states)[l.single.offset(s, b, h, d)];
                    value = to_float(x);
                    if (PointwiseItem::owned(n, unit, place)) states[l.sequence.offset(s, 0, b, h, d)] = x;
                    if (kOperandStays && s == 0) operand[n * kOperandStride + d] = to_operand(value);
                }
                cell_states[(s * kBatchRows + n) * kUnits + unit] = value;
            }
        }
    }
    // The operand of step t of the place's chunk, every unit of the head: the initial state as given,
    // then the states tensor (written by the group's blocks before their barrier).
    auto state_rows = [&](long long t, const BlockPlace& place) {
        return [&, t, place](int n) -> const Element* {
            const int b = place.batch_base + n;
            if (b >= batch) return nullptr;
            return (t == 0 ? static_cast<const Element*>(p.initial_states) + l.single.offset(0, b, h, 0)
                           : states + l.sequence.offset(0, t, b, h, 0)) +
                   k_base;
        };
    };
    auto gather_state = [&](long long t, const BlockPlace& place) {
        const auto source = state_rows(t, place);
        // Shared by the cluster after its start (a split head's step 0 comes before it); the gather
        // itself falls back to gather_rows where rows cannot travel as bulk copies.
        if (t > 0)
            multicast.gather<kBlockColumns>(operand, source, min(kBatchRows, batch - place.batch_base));
        else
            gather_rows<kBlockColumns>(operand, source);
    };
    // A split head's first operand (after the zeroing's barrier); chunks inside each step gather theirs.
    if (Traits::cooperative && !Traits::chunks_in_step) gather_state(0, block);
    // With the cluster exchange the peers store into this block's buffers from step 0 on (with the
    // multicast gather from step 1 on): after the zeroing, and only once every block of the cluster runs.
    if constexpr (Traits::cluster_exchange)
        ClusterExchange::barrier();
    else if constexpr (Traits::multicast_gather)
        MulticastGather::start();
    else
        __syncthreads();

    // The next step's (or chunk's) inputs are loaded while this one computes: their latency leaves
    // the chain.
    StepInputs upcoming;
    load_inputs(0, block.at_chunk(0), upcoming);
    for (long long t = 0; t < T; ++t) {
        for (int chunk = 0; chunk < kStepChunks; ++chunk) {
            const BlockPlace place = block.at_chunk(chunk);
            float* cell_states = all_cell_states + chunk * kChunkStates;
            StepInputs inputs;
#pragma unroll
            for (int item = 0; item < kItems; ++item)
#pragma unroll
                for (int k = 0; k < Cell::num_input_gates; ++k)
                    inputs[item][k] = upcoming[item][k];
            if (chunk + 1 < kStepChunks)
                load_inputs(t, block.at_chunk(chunk + 1), upcoming);
            else
                load_inputs(t + 1, block.at_chunk(0), upcoming);

            OperandElement* step_operand = operand_of(t);
            if constexpr (Traits::chunks_in_step) { // after the cluster's start: shared from step 0 on
                step_operand = multicast.chunk_operand(
                    operand, chunk, [&](int c, OperandElement* into, unsigned buffer) {
                        const BlockPlace at = block.at_chunk(c);
                        multicast.issue<kBlockColumns>(into, state_rows(t, at),
                                                       min(kBatchRows, batch - at.batch_base), buffer);
                    });
                __syncthreads();
            }
            product.run(step_operand, partials);
            __syncthreads();
            MulticastGather::done_reading();
            if constexpr (kKSplit) { // every k block's sums, for this step's cell
                k_split.publish(partials, block);
                arrivals += kGroupBlocks;
                group_barrier(barrier, arrivals);
            }

            Element sent[kItems]; // the state that multiplies R, of each item
#pragma unroll
            for (int item = 0; item < kItems; ++item) {
                const PointwiseItem it(item, place);
                sent[item] = from_float(0.0f);
                if (!it.live) continue;
                float pre[G];
#pragma unroll
                for (int g = 0; g < G; ++g)
                    pre[g] = bias_of[g * kUnits + it.unit];
#pragma unroll
                for (int k = 0; k < Cell::num_input_gates; ++k)
                    pre[Cell::gate_of_input_row(k)] += to_float(inputs[item][k]);
                float recurrent[G_REC];
                if constexpr (kKSplit) {
#pragma unroll
                    for (int k = 0; k < G_REC; ++k)
                        recurrent[k] = k_split.at(it.n, it.unit * G_REC + k, block);
                } else {
                    recurrent_products(partials, it.n, it.unit, recurrent);
                }
#pragma unroll
                for (int k = 0; k < G_REC; ++k)
                    pre[Cell::gate_of_recurrent_block(k)] += recurrent[k];
                float previous[S], next[S];
#pragma unroll
                for (int s = 0; s < S; ++s)
                    previous[s] = cell_states[(s * kBatchRows + it.n) * kUnits + it.unit];
                Cell::forward(pre, previous, next);
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    cell_states[(s * kBatchRows + it.n) * kUnits + it.unit] = next[s];
                    const Element out = from_float(next[s]);
                    states[l.sequence.offset(s, t + 1, it.b, h, it.d)] = out;
                    if (p.last_state && t + 1 == T)
                        static_cast<Element*>(p.last_state)[l.single.offset(s, it.b, h, it.d)] = out;
                    if (s == 0) sent[item] = out;
                }
                if (kOperandStays) operand[it.n * kOperandStride + it.d] = to_operand(next[0]);
                if (p.gate_cache) {
#pragma unroll
                    for (int slot = 0; slot < G; ++slot)
                        p.gate_cache[l.gate_slots.offset(t, it.b, h, slot, it.d)] =
                            pre[alternating::gate_of_slot<Cell>(slot)];
                }
            }
            if constexpr (Traits::cluster_exchange) { // one chunk, as tagged
                if (t + 1 < T) {
#pragma unroll
                    for (int item = 0; item < kItems; ++item) {
                        const PointwiseItem it(item, place);
                        cluster.send(t + 1, operand_of(t + 1), it.n, it.d, to_operand(to_float(sent[item])),
                                     it.live);
                    }
                }
            }
            if constexpr (Traits::tagged_exchange) { // one chunk (tagged only without chunks in the step)
                if (t + 1 < T) {
                    const unsigned number = static_cast<unsigned>(t + 1);
#pragma unroll
                    for (int item = 0; item < kItems; ++item) {
                        const PointwiseItem it(item, place);
                        exchange.send(number, it.n, it.d, sent[item], it.live);
                    }
                }
            }
        }

        if (Traits::cooperative) {
            if (t + 1 == T) break;
            if constexpr (Traits::cluster_exchange) {
                cluster.receive(t + 1, live_rows);
            } else if constexpr (Traits::tagged_exchange) {
                exchange.receive(static_cast<unsigned>(t + 1), operand,
                                 [&](int n) { return block.batch_base + n < batch; });
            } else {
                arrivals += kGroupBlocks;
                group_barrier(barrier, arrivals);
                if constexpr (!Traits::chunks_in_step) gather_state(t + 1, block);
            }
        }
        __syncthreads();
    }
    if constexpr (Traits::cluster_exchange) ClusterExchange::barrier();
    MulticastGather::finish();
}

} // namespace flashrnn::fused

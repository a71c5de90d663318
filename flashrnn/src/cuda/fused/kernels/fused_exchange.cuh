// How the blocks of a head split over blocks (and of one batch block: a group) exchange each step's
// operand: the state forward, the gate gradients backward. Two ways, chosen by the traits
// (FusedKernelTraits::tagged_exchange):
//
// Tagged (StepExchange), without a barrier: each value a block sends to the others travels in a
// 64-bit word together with the number of its exchange, so a reader knows from the word itself
// whether it is this step's (the LL protocol of NCCL, with one scalar 64-bit store per word:
// single-copy atomic). A step costs one trip through L2 (the writer's store, the readers' loads)
// instead of a fence, an atomic arrival, the polling of a counter and the loads; but the words carry
// twice the bytes, and readers reload what is not there yet. Words: [group][exchange parity][batch
// row][kRowWords], zeroed before the launch (exchange 0 never happens). Two parities are enough: a
// block writes exchange e + 2 only after it has read exchange e + 1 from every block, which each of
// them wrote only after reading exchange e.
//
// Barrier (group_barrier, then gather_rows from the tensor the blocks wrote): a counter per group,
// the first of the group's words.
#pragma once

#include "fused_common.cuh"

namespace flashrnn::fused {

// A batch row of the exchange carries kLength values (the operand's k), 2 per word for 16-bit types
// (the lower column in the low half) and 1 for fp32, below the 32-bit exchange number.
template <int kLength> struct StepExchange {
    static constexpr int kValuesPerWord = exchange_values_per_word(Traits{});
    static constexpr int kRowWords = kLength / kValuesPerWord;
    static constexpr int kRowVectors = kRowWords / 2; // 16-byte loads of two words
    // A split head splits on whole mma tiles of rows, which makes both hold (fused_tiling.cpp).
    static_assert(!Traits::tagged_exchange || kLength % (2 * kValuesPerWord) == 0,
                  "an exchanged row is whole 16-byte vectors");
    static_assert(!Traits::tagged_exchange || kValuesPerWord == 1 || kUnits % 2 == 0,
                  "a block sends whole words: an even number of units");

    unsigned long long* words; // this group's

    __device__ explicit StepExchange(unsigned long long* all, const BlockPlace& place)
        : words(all + place.group * exchange_words_per_group(Traits{})) {}

    // Sends the value at (batch row n, column) of exchange `number`. Every thread of the block calls
    // it for its item (live or not: the 16-bit types pair neighbouring lanes, which hold neighbouring
    // columns of one batch row); `column` and its neighbour's differ by one.
    __device__ void send(unsigned number, int n, int column, Element value, bool live) const {
        unsigned bits;
        if constexpr (kValuesPerWord == 2) {
            const unsigned own = *reinterpret_cast<const unsigned short*>(&value);
            const unsigned next = __shfl_down_sync(0xffffffffu, own, 1);
            if (!live || column % 2 != 0) return;
            bits = own | next << 16;
        } else {
            if (!live) return;
            bits = __float_as_uint(value);
        }
        const unsigned long long word = (unsigned long long)number << 32 | bits;
        unsigned long long* at =
            words + ((number & 1) * kBatchRows + n) * kRowWords + column / kValuesPerWord;
        asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(at), "l"(word) : "memory");
    }

    // Block-wide: the operand's batch rows (those `live(n)`) from exchange `number`, each load
    // repeated until its words carry that number. Every thread keeps its loads in flight together
    // and reloads only what was not there yet. The caller's __syncthreads makes the rows visible.
    template <class Live> __device__ void receive(unsigned number, OperandElement* operand, Live live) const {
        constexpr int kVectors = kBatchRows * kRowVectors;
        constexpr int kPerThread = (kVectors + Traits::threads_per_block - 1) / Traits::threads_per_block;
        constexpr int kInFlight = kPerThread < 8 ? kPerThread : 8;
        const ulonglong2* slot =
            reinterpret_cast<const ulonglong2*>(words + (number & 1) * kBatchRows * kRowWords);
        for (int first = threadIdx.x; first < kVectors; first += kInFlight * Traits::threads_per_block) {
            ulonglong2 v[kInFlight];
            bool wanted[kInFlight];
#pragma unroll
            for (int j = 0; j < kInFlight; ++j) {
                const int index = first + j * Traits::threads_per_block;
                wanted[j] = index < kVectors && live(index / kRowVectors);
                if (wanted[j]) v[j] = load(slot + index);
            }
            for (bool pending = true; pending;) {
                pending = false;
#pragma unroll
                for (int j = 0; j < kInFlight; ++j) {
                    if (!wanted[j] || (v[j].x >> 32 == number && v[j].y >> 32 == number)) continue;
                    v[j] = load(slot + first + j * Traits::threads_per_block);
                    pending = true;
                }
            }
#pragma unroll
            for (int j = 0; j < kInFlight; ++j) {
                if (!wanted[j]) continue;
                const int index = first + j * Traits::threads_per_block;
                const int n = index / kRowVectors, k = index % kRowVectors * 2 * kValuesPerWord;
                OperandElement* target = operand + n * kOperandStride + k;
                if constexpr (kValuesPerWord == 2) {
                    *reinterpret_cast<uint2*>(target) = make_uint2((unsigned)v[j].x, (unsigned)v[j].y);
                } else {
                    target[0] = to_operand(__uint_as_float((unsigned)v[j].x));
                    target[1] = to_operand(__uint_as_float((unsigned)v[j].y));
                }
            }
        }
    }

  private:
    static __device__ ulonglong2 load(const ulonglong2* at) {
        ulonglong2 v;
        asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];"
                     : "=l"(v.x), "=l"(v.y)
                     : "l"(at)
                     : "memory");
        return v;
    }
};

// The blocks of one group meet here each step: every block's writes before the barrier are visible
// to every block after it. `arrivals` counts the blocks' arrivals over the whole launch (zeroed
// before it); the step's barrier waits until all of them have arrived.
__device__ inline void group_barrier(unsigned* counter, unsigned arrivals) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(counter, 1u);
        unsigned seen;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
        } while (seen < arrivals);
    }
    __syncthreads();
}

} // namespace flashrnn::fused

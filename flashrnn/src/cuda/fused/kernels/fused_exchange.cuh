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
//
// Cluster (ClusterExchange, Traits::cluster_exchange, sm_90): the group's blocks are one thread-block
// cluster (the block's rank in it is its row block). Each block stores its units' state straight into
// the next step's operand buffer of every block of the cluster (distributed shared memory, st.async),
// each store counting its bytes on the receiver's transaction barrier (mbarrier): a block waits in its
// own shared memory until the step's bytes have arrived, with no trip through L2 and no barrier of the
// whole cluster. Two operand buffers by step parity: a block stores step t + 1's into a peer only
// after it has received the peer's state of step t, which the peer sent after its product of step
// t - 1 had read that buffer.
//
// Multicast (MulticastGather, Traits::multicast_gather, sm_90a): the barrier's gather, shared by the
// blocks of a thread-block cluster (below).
#pragma once

#include "fused_common.cuh"

namespace flashrnn::fused {

// The 32 bits a thread sends for its item at `column` of a batch row: 16-bit values pair neighbouring
// lanes (neighbouring columns, the lower column in the low half), sent by the even column's lane; fp32
// is one value. False where the thread sends nothing. Every lane of the warp calls it (the shuffle).
template <class Value>
__device__ inline bool bits_to_send(Value value, int column, bool live, unsigned& bits) {
    if constexpr (sizeof(Value) == 2) {
        const unsigned own = *reinterpret_cast<const unsigned short*>(&value);
        const unsigned neighbour = __shfl_down_sync(0xffffffffu, own, 1);
        bits = own | neighbour << 16;
        return live && column % 2 == 0;
    } else {
        bits = *reinterpret_cast<const unsigned*>(&value);
        return live;
    }
}

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
        if (!bits_to_send(value, column, live, bits)) return;
        const unsigned long long word = (unsigned long long)number << 32 | bits;
        unsigned long long* at =
            words + ((number & 1) * kOperandRows + n) * kRowWords + column / kValuesPerWord;
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
            reinterpret_cast<const ulonglong2*>(words + (number & 1) * kOperandRows * kRowWords);
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

// The k split (kKSplit): the k blocks of a row block each multiply their k columns of R (forward:
// state units) or R^T (backward: gate units); their partial products meet in the group's words after
// its barrier counter, fp32 [k block][batch row][row of the head] (fused_layout.hpp; rows unit-major,
// Traits::rows_per_unit per unit), and after the group's next barrier the block that owns an item
// (PointwiseItem) sums its rows over the k blocks, in one order. One buffer is enough: a block writes
// the next step's sums only after the barrier that follows every block's reads of this step's.
struct KSplitSums {
    static constexpr int kBlockRows = kUnits * Traits::rows_per_unit;
    float* sums; // this group's

    __device__ explicit KSplitSums(unsigned long long* group_words)
        : sums(reinterpret_cast<float*>(group_words + 1)) {}

    // Block-wide, after the product and a barrier of the block: its sums over its k warps.
    __device__ void publish(const float* partials, const BlockPlace& place) const {
        float* own =
            sums + place.k_block * kOperandRows * Traits::rows + place.unit_base * Traits::rows_per_unit;
        for (int i = threadIdx.x; i < kBatchRows * kBlockRows; i += Traits::threads_per_block) {
            const int n = i / kBlockRows, row = i % kBlockRows;
            __stcg(own + n * Traits::rows + row, product_at(partials, n, row));
        }
    }

    // After the group's barrier: the product at (batch row n, row of the block) over all k blocks.
    __device__ float at(int n, int row, const BlockPlace& place) const {
        const float* first = sums + n * Traits::rows + place.unit_base * Traits::rows_per_unit + row;
        float sum = 0.0f;
#pragma unroll
        for (int q = 0; q < Traits::k_blocks; ++q)
            sum += __ldcg(first + q * kOperandRows * Traits::rows);
        return sum;
    }
};

// Transaction barriers (mbarrier) in a block's shared memory, which the cluster exchange and the
// multicast gather count their incoming bytes on.
__device__ inline unsigned shared_address(const void* at) {
    return static_cast<unsigned>(__cvta_generic_to_shared(at));
}
// One thread: a barrier of one arrival, visible to the cluster's copies after the caller's cluster barrier.
__device__ inline void init_transaction_barriers(unsigned long long* barriers, int count) {
    for (int i = 0; i < count; ++i)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barriers + i)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// One thread: this phase's arrival, which completes once `bytes` more have arrived.
__device__ inline void expect_transaction_bytes(unsigned barrier, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes)
                 : "memory");
}
// Every waiting thread: until the barrier's phase of this parity has completed.
__device__ inline void wait_for_transaction_phase(unsigned barrier, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(barrier), "r"(parity)
                     : "memory");
}

struct ClusterExchange {
    static_assert(!Traits::cluster_exchange || sizeof(OperandElement) == 4 || kUnits % 2 == 0,
                  "a block sends whole 32-bit pairs: an even number of units");

    // One transaction barrier per operand buffer: a peer's stores into the buffer count their bytes on
    // it (st.async ... complete_tx), and the block waits for a step's bytes to have arrived, no more.
    unsigned long long* arrived; // [2], in this block's shared memory
    unsigned first_peer;         // each block starts with the next one, spreading the stores

    __device__ explicit ClusterExchange(unsigned long long* barriers)
        : arrived(barriers), first_peer(blockIdx.x % Traits::row_blocks) {
        if constexpr (Traits::cluster_exchange) {
            if (threadIdx.x == 0) init_transaction_barriers(arrived, 2);
        }
    }

    // Stores the value at (batch row n, column) of step `step`'s operand (its buffer `next`, at the
    // same offset in every block of the cluster): a plain store into this block's, st.async into the
    // peers'. Called by every thread for its item, live or not (bits_to_send: one 32-bit store per pair
    // of 16-bit values).
    __device__ void send(long long step, OperandElement* next, int n, int column, OperandElement value,
                         bool live) const {
        unsigned bits;
        if (!bits_to_send(value, column, live, bits)) return;
        unsigned* local = reinterpret_cast<unsigned*>(next + n * kOperandStride + column);
        *local = bits;
        const unsigned address = shared_address(local), barrier = shared_address(arrived + (step & 1));
#pragma unroll 4
        for (unsigned j = 1; j < Traits::row_blocks; ++j) {
            const unsigned rank = (first_peer + j) % Traits::row_blocks;
            unsigned remote, remote_barrier;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(rank));
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                         : "=r"(remote_barrier)
                         : "r"(barrier), "r"(rank));
            asm volatile(
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
                "r"(bits), "r"(remote_barrier)
                : "memory");
        }
    }

    // Block-wide: waits until the peers' stores of step `step`'s operand (`live_rows` batch rows) have
    // arrived. Step s's buffer and barrier are s % 2, used for the ((s - 1) / 2)-th time (step 0's
    // operand is gathered), which gives the phase's parity. The caller's __syncthreads makes this
    // block's own stores visible.
    __device__ void receive(long long step, int live_rows) const {
        const unsigned barrier = shared_address(arrived + (step & 1));
        if (threadIdx.x == 0)
            expect_transaction_bytes(barrier, static_cast<unsigned>(live_rows) * (Traits::head_dim - kUnits) *
                                                  sizeof(OperandElement));
        wait_for_transaction_phase(barrier, static_cast<unsigned>((step - 1) >> 1) & 1u);
    }

    // Every thread of every block of the cluster: the stores before it are visible to all after it.
    // At the start (no peer stores into a block before it has zeroed its buffers and initialised its
    // barriers) and at the end (no block leaves while its shared memory may still be written).
    __device__ static void barrier() {
        asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                         : "memory");
    }
};

// The barrier exchange's gather shared by a thread-block cluster (Hopper, Traits::multicast_gather):
// after the group's barrier every block of a split head needs the same operand rows (every unit of
// the head for its batch rows), which gather_rows reads from L2 once per block. Here the group's row
// blocks run as clusters (their size chosen at launch, read from %cluster_nctarank), and the block of
// rank r copies batch rows r, r + c, ... of the operand from global memory into the same place in the
// shared memory of all c blocks of its cluster, one bulk copy per row (cp.async.bulk ...
// multicast::cluster): L2 serves each row once per cluster. Each block waits on its own transaction
// barrier until all of its rows have arrived. A block's rows are overwritten only after the group's
// next barrier, which every block reaches after its product has read them; with chunks inside each
// step (no group barrier between chunks) after a split cluster barrier instead: each block arrives
// once its product has read a chunk's rows (done_reading) and waits for its peers before it copies the
// next chunk's (wait_for_peers). Without clusters (or rows that cannot travel as bulk copies) the
// same calls gather with gather_rows into this block alone.
//
// With a second operand buffer (Traits::prefetch_operand: chunk c's rows in buffer c % 2, a
// transaction barrier each) chunk_operand issues chunk c + 1's gather at chunk c's turn, before its
// product, right after its wait_for_peers. That wait pairs with every block's arrival after its
// product of chunk c - 1, the last reader of buffer (c + 1) % 2 (at c = 0 the arrival after the
// previous step's last product, the step's earlier ones before it; at step 0 the start's, after the
// zeroing): no buffer of the cluster is overwritten before all of its readers are done. A block waits
// for a buffer's phase before that arrival, so no byte of the buffer's next phase comes before it.
// gather_rows writes this block's own buffer, last read before the block's __syncthreads after the
// product of chunk c - 1; its cp.async groups are waited for all but the newest.
struct MulticastGather {
    static constexpr bool kBetweenChunks = Traits::multicast_gather && Traits::chunks_in_step;
    static constexpr bool kPrefetch = Traits::chunks_in_step && Traits::prefetch_operand;
    static constexpr int kBuffers = kPrefetch ? 2 : 1;
    unsigned long long* arrived; // the transaction barriers [kBuffers], in this block's static shared memory
    unsigned rank = 0, blocks = 1;
    unsigned phases = 0; // bit b: the phase of buffer b's barrier
    unsigned bulk = 0;   // bit b: buffer b's last gather was bulk copies (else gather_rows)

    // Initialises the barriers; the caller's cluster barrier (ClusterExchange::barrier) then makes them
    // visible to the peers before any of them copies into this block.
    __device__ explicit MulticastGather(unsigned long long* barriers) : arrived(barriers) {
        if constexpr (Traits::multicast_gather) {
            asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
            asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
            if (threadIdx.x == 0) init_transaction_barriers(arrived, kBuffers);
        }
    }

    // Whether rows at `first` (the first batch row's source) can travel as bulk copies: 16-byte
    // aligned, whole 16-byte lengths. The same answer in every block of a cluster (one tensor).
    template <int kLength> static __device__ bool applies(const Element* first) {
        return Traits::multicast_gather && kLength * sizeof(Element) % 16 == 0 &&
               reinterpret_cast<unsigned long long>(first) % 16 == 0;
    }

    // Block-wide: starts the copy of the operand's first `live_rows` batch rows, each of kLength
    // elements from source(n) (a row every block of the group reads), into `operand` (buffer `buffer`)
    // of every block of the cluster, or into this block's alone with gather_rows. Each call commits
    // one cp.async group (empty for bulk copies), which `wait` counts on.
    template <int kLength, class Source>
    __device__ void issue(OperandElement* operand, Source source, int live_rows, unsigned buffer) {
        if (!applies<kLength>(source(0))) {
            bulk &= ~(1u << buffer);
            gather_rows<kLength, Traits::threads_per_block, false>(operand, source);
            return;
        }
        bulk |= 1u << buffer;
        constexpr unsigned kRowBytes = kLength * sizeof(Element);
        const unsigned barrier = shared_address(arrived + buffer);
        if (threadIdx.x == 0) expect_transaction_bytes(barrier, static_cast<unsigned>(live_rows) * kRowBytes);
        const unsigned short mask = static_cast<unsigned short>((1u << blocks) - 1);
        for (int n = static_cast<int>(rank) + threadIdx.x * static_cast<int>(blocks); n < live_rows;
             n += Traits::threads_per_block * static_cast<int>(blocks)) {
            // The rows were written by the group's generic stores (ordered by the barrier's acquire):
            // the bulk copy reads them through the async proxy.
            asm volatile("fence.proxy.async.global;" ::: "memory");
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                "[%0], [%1], %2, [%3], %4;" ::"r"(shared_address(operand + n * kOperandStride)),
                "l"(source(n)), "r"(kRowBytes), "r"(barrier), "h"(mask)
                : "memory");
        }
        if constexpr (kPrefetch) asm volatile("cp.async.commit_group;" ::: "memory");
    }

    // Block-wide: until buffer `buffer`'s rows of its last issue are here (`newer`: one issue since,
    // whose group may stay in flight). gather_rows' rows then need the caller's __syncthreads.
    __device__ void wait(unsigned buffer, bool newer) {
        if (bulk >> buffer & 1u) {
            wait_for_transaction_phase(shared_address(arrived + buffer), phases >> buffer & 1u);
            phases ^= 1u << buffer;
        } else if (newer) {
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
    }

    // Block-wide: the operand's rows into `operand`; returns once this block's rows are all there.
    // The caller's __syncthreads is not needed for bulk copies (the barrier's wait orders them), but
    // the caller keeps its own for gather_rows and for what else the block wrote.
    template <int kLength, class Source>
    __device__ void gather(OperandElement* operand, Source source, int live_rows) {
        issue<kLength>(operand, source, live_rows, 0);
        wait(0, false);
    }

    // Block-wide, chunks inside each step, at chunk `chunk`'s turn (the step's chunks in order): waits
    // for the peers, gathers (issue_chunk(c, operand, buffer) calls issue for chunk c) and returns the
    // buffer of the chunk's operand once its rows are here; the caller's __syncthreads follows. With
    // the prefetch chunk 0's gather is issued at its turn and chunk c + 1's at chunk c's.
    template <class IssueChunk>
    __device__ OperandElement* chunk_operand(OperandElement* operand, int chunk, IssueChunk issue_chunk) {
        wait_for_peers();
        if constexpr (kPrefetch) {
            constexpr int kOperandElements = kOperandRows * kOperandStride;
            // Chunk c's buffer, for this chunk and the next alike. Written as buffer ^ 1 for the next,
            // ptxas (CUDA 13.0, sm_90a) folded chunk 1's transaction barrier, at chunk 0, to buffer 0's
            // in some configurations (GRU 16-bit (1, 1024) B 192; LSTM bf16 (1, 768) B 256 at 2 x 3
            // warps, where chunk 0's barrier took two arrivals and the kernel faulted; the PTX was
            // right): the GPU test "the chunks' prefetch with the multicast gather, both barriers".
            const auto buffer_of = [](int c) { return static_cast<unsigned>(c) & 1u; };
            if (chunk == 0) issue_chunk(0, operand, buffer_of(0));
            const bool next = chunk + 1 < kStepChunks;
            const unsigned buffer = buffer_of(chunk), next_buffer = buffer_of(chunk + 1);
            if (next) issue_chunk(chunk + 1, operand + next_buffer * kOperandElements, next_buffer);
            wait(buffer, next);
            return operand + buffer * kOperandElements;
        } else {
            issue_chunk(chunk, operand, 0u);
            wait(0, false);
            return operand;
        }
    }

    // Chunks inside each step: the split cluster barrier between a chunk's product and the next
    // chunk's copies (every thread; arrivals and waits alternate, the first arrival at the start).
    static __device__ void done_reading() {
        if constexpr (kBetweenChunks) asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    }
    static __device__ void wait_for_peers() {
        if constexpr (kBetweenChunks) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    }

    // Every thread of the block, after the zeroing of the operand: the cluster's barrier, so that no
    // peer copies into a block before its barrier is initialised (with chunks also the first arrival).
    static __device__ void start() {
        if constexpr (Traits::multicast_gather) {
            ClusterExchange::barrier();
            done_reading();
        }
    }
    // At the end: no block leaves while its peers may still copy into it (with chunks the last wait,
    // which follows every peer's last product, after all of its copies had arrived).
    static __device__ void finish() {
        if constexpr (kBetweenChunks)
            wait_for_peers();
        else if constexpr (Traits::multicast_gather)
            ClusterExchange::barrier();
    }
};

} // namespace flashrnn::fused

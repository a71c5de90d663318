// What the fused forward and backward kernels share: the element type and cell of the traits, the
// tensor-core instruction and its fragments, the product of a block and where a block works.
// Compiled with NVRTC after the generated `struct FusedTraits` (flashrnn::FusedKernelTraits).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "flashrnn/cells/elman.hpp"
#include "flashrnn/cells/gru.hpp"
#include "flashrnn/cells/lstm.hpp"
#include "flashrnn/cells/slstm.hpp"
#include "fused_params.hpp"

namespace flashrnn::fused {

using Traits = FusedTraits;

// The cell of the traits (flashrnn::Cell order: lstm, gru, slstm, elman).
template <int cell> struct CellOf;
template <> struct CellOf<0> { using type = cells::Lstm; };
template <> struct CellOf<1> { using type = cells::Gru; };
template <> struct CellOf<2> { using type = cells::Slstm; };
template <> struct CellOf<3> { using type = cells::Elman; };
using Cell = typename CellOf<Traits::cell>::type;

// The tensors' element type (flashrnn::DType order: fp32, bf16, fp16) and its conversions.
template <int dtype> struct ElementOf;
template <> struct ElementOf<0> {
    using type = float;
    static __device__ float to_float(float x) { return x; }
    static __device__ float from_float(float x) { return x; }
};
template <> struct ElementOf<1> {
    using type = __nv_bfloat16;
    static __device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};
template <> struct ElementOf<2> {
    using type = __half;
    static __device__ float to_float(__half x) { return __half2float(x); }
    static __device__ __half from_float(float x) { return __float2half_rn(x); }
};
using Element = typename ElementOf<Traits::dtype>::type;
__device__ inline float to_float(Element x) {
    return ElementOf<Traits::dtype>::to_float(x);
}
__device__ inline Element from_float(float x) {
    return ElementOf<Traits::dtype>::from_float(x);
}

constexpr int kWarp = 32;
constexpr bool kTf32 = Traits::dtype == 0;
// The operand's rows (the mma's batch columns of the block's tiles), and the batch rows of one chunk:
// as many, or fewer in a narrow block (the tile's other columns multiply the zero rows, unread).
constexpr int kOperandRows = Traits::batch_tiles_per_block * Traits::mma_n;
constexpr int kBatchRows = Traits::batch_rows_per_block;
static_assert(kBatchRows == kOperandRows || (kBatchRows < kOperandRows && !Traits::cooperative),
              "narrow blocks are independent (the step exchange moves whole tiles)");
constexpr int kOperandColumns = Traits::k_tiles_per_block * Traits::mma_k;
constexpr int kOperandStride = kOperandColumns + operand_padding(Traits{}); // elements per batch row
constexpr int kPartialsStride = partials_row_stride<int>(Traits{}); // floats per batch row of partials
constexpr SharedLayout kShared = shared_layout(Traits{}, !Traits::backward);
static_assert(kShared.total == Traits::shared_memory_bytes, "the tiling model counts the same layout");

constexpr int G = Cell::num_gates, S = Cell::num_states, G_REC = Cell::num_recurrent_gates;
// The block's state units, and the (batch row, unit) items of its pointwise work: a row block's
// items, split over its k blocks (kShareItems each, the last fewer), then over each one's threads.
constexpr int kUnits = Traits::units_per_block;
constexpr int kRowBlockItems = kBatchRows * kUnits;
constexpr int kShareItems = (kRowBlockItems + Traits::k_blocks - 1) / Traits::k_blocks;
constexpr int kItems = (kShareItems + Traits::threads_per_block - 1) / Traits::threads_per_block;
// The blocks of one group (a head of a batch block), which meet at its barrier.
constexpr int kGroupBlocks = Traits::row_blocks * Traits::k_blocks;
// The k split (fused_tiling.cpp): the k blocks of a row block sum their partial products after a
// barrier (KSplitSums, fused_exchange.cuh).
constexpr bool kKSplit = Traits::k_blocks > 1;
// The k columns a block multiplies and gathers of the operand: its k block's (BlockPlace::k_base on),
// or every column of the head without a split, where the operand's padding past them multiplies zeros.
constexpr int kBlockColumns = kKSplit ? kOperandColumns : Traits::k_length;
static_assert(!kKSplit || (Traits::cooperative && !Traits::tagged_exchange && !Traits::multicast_gather &&
                           !Traits::cluster_exchange && !Traits::chunks_in_step &&
                           Traits::k_blocks * Traits::k_tiles_per_block * Traits::mma_k == Traits::k_length),
              "the k split: the barrier exchange, one chunk per step, whole k tiles");
static_assert(Traits::mma_m == 16 && Traits::mma_n == 8 && Traits::mma_k == (kTf32 ? 8 : 16),
              "mma.sync m16n8k16 (bf16, fp16) or m16n8k8 (tf32)");
static_assert(Traits::row_warps * Traits::k_warps * kWarp == Traits::threads_per_block, "warps of the block");

// One operand element as stored in shared memory: the 16-bit type itself, or fp32 already rounded
// to tf32.
using OperandElement = typename ElementOf<kTf32 ? 0 : Traits::dtype>::type;

__device__ inline unsigned to_tf32(float x) {
    unsigned bits;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
    return bits;
}

__device__ inline OperandElement to_operand(float x) {
    if constexpr (kTf32)
        return __uint_as_float(to_tf32(x));
    else
        return from_float(x);
}

// Two elements in one 32-bit register, the lower column in the low half (the fragments' order).
__device__ inline unsigned pack(float low, float high) {
    if constexpr (Traits::dtype == 1) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
        return *reinterpret_cast<const unsigned*>(&pair);
    } else {
        const __half2 pair = __floats2half2_rn(low, high);
        return *reinterpret_cast<const unsigned*>(&pair);
    }
}

// The A fragment of one 16 x mma_k tile, from a function a(row, column) of the tile: PTX ISA,
// "Matrix Fragments for mma.m16n8k16" (16-bit) and "mma.m16n8k8" (tf32).
template <class ElementAt> __device__ inline uint4 a_fragment(int lane, ElementAt a) {
    const int group = lane >> 2, quad = lane & 3;
    uint4 f;
    if constexpr (kTf32) {
        f.x = to_tf32(a(group, quad));
        f.y = to_tf32(a(group + 8, quad));
        f.z = to_tf32(a(group, quad + 4));
        f.w = to_tf32(a(group + 8, quad + 4));
    } else {
        f.x = pack(a(group, 2 * quad), a(group, 2 * quad + 1));
        f.y = pack(a(group + 8, 2 * quad), a(group + 8, 2 * quad + 1));
        f.z = pack(a(group, 2 * quad + 8), a(group, 2 * quad + 9));
        f.w = pack(a(group + 8, 2 * quad + 8), a(group + 8, 2 * quad + 9));
    }
    return f;
}

// The B fragment of k tile `k_tile` and batch tile `batch_tile` from the operand buffer [row][k].
__device__ inline uint2 b_fragment(const OperandElement* operand, int lane, int k_tile, int batch_tile) {
    const int group = lane >> 2, quad = lane & 3;
    const OperandElement* row =
        operand + (batch_tile * Traits::mma_n + group) * kOperandStride + k_tile * Traits::mma_k;
    uint2 f;
    if constexpr (kTf32) {
        f.x = __float_as_uint(row[quad]);
        f.y = __float_as_uint(row[quad + 4]);
    } else {
        f.x = *reinterpret_cast<const unsigned*>(row + 2 * quad);
        f.y = *reinterpret_cast<const unsigned*>(row + 2 * quad + 8);
    }
    return f;
}

// d += a b with fp32 accumulation. d: rows (group, group + 8) x batch columns (2 quad, 2 quad + 1).
__device__ inline void mma(float (&d)[4], const uint4& a, const uint2& b) {
    if constexpr (kTf32) {
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
    } else if constexpr (Traits::dtype == 1) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
    }
}

constexpr int kOperandLookahead = 4; // k tiles whose operand fragments may be loaded ahead

// The recurrent product of one block: its rows of R (or R^T) times the operand buffer, for every
// batch tile, into the fp32 partial products [k warp][batch row][row]. R's tiles: the first
// k_tiles_in_registers of each of the warp's row tiles in `registers`, the rest in shared memory.
struct Product {
    uint4 registers[Traits::row_tiles_per_warp]
                   [Traits::k_tiles_in_registers > 0 ? Traits::k_tiles_in_registers : 1];
    const uint4* shared_tiles; // this warp's tiles in shared memory, [row tile][tile][lane]
    int lane, row_warp, k_warp;

    __device__ Product()
        : shared_tiles(nullptr), lane(threadIdx.x % kWarp), row_warp(threadIdx.x / kWarp % Traits::row_warps),
          k_warp(threadIdx.x / kWarp / Traits::row_warps) {}

    // Loads R once: a(row, k) is the element at the block's row and k (0 outside the matrix); the
    // tiles not held in registers go to the warp's part of the block's R tiles in shared memory.
    template <class BlockElement> __device__ void load(BlockElement a, uint4* block_shared_tiles) {
        load_tiles(block_shared_tiles, [&](int row_tile, int k_tile) {
            return a_fragment(lane, [&](int r, int k) {
                return a(row_tile * Traits::mma_m + r, k_tile * Traits::mma_k + k);
            });
        });
    }

    // The direct loads of R (Traits::direct_r_load, 16-bit types): whole words or 16-byte pieces of R
    // instead of two-byte elements, each with its own 64-bit address, bounds test and conversion. The
    // one-time load element by element held more registers than the steps (nvdisasm's liveness of the
    // LSTM bf16 backward at DH 1600, B 3, 256 threads: 252 live in the load, 145 in the step loop),
    // so that ptxas spilled configurations whose steps fit.
    //
    // Where a row's k are contiguous in memory (R in the forward): each fragment register is the word
    // of the pair (row, k), (row, k + 1) itself. word(row, k) is its address, or null where the pair is
    // not whole, 4-byte aligned and inside the matrix (then a(row, k) reads it element by element).
    template <class BlockElement, class WordAt>
    __device__ void load_pairs(BlockElement a, WordAt word, uint4* block_shared_tiles) {
        const int group = lane >> 2, quad = lane & 3;
        const auto pair = [&](int row, int k) -> unsigned {
            if (const Element* at = word(row, k)) return __ldg(reinterpret_cast<const unsigned*>(at));
            return pack(a(row, k), a(row, k + 1));
        };
        load_tiles(block_shared_tiles, [&](int row_tile, int k_tile) {
            const int row = row_tile * Traits::mma_m + group, k = k_tile * Traits::mma_k + 2 * quad;
            return make_uint4(pair(row, k), pair(row + 8, k), pair(row, k + 8), pair(row + 8, k + 8));
        });
    }

    // Where a k's rows are contiguous in memory (R^T in the backward): each lane copies 8 rows of one k
    // as 16 bytes into its warp's `scratch` (kDirectLoadScratchElements: 16 k x 16 rows), and
    // ldmatrix.trans hands each lane its fragment (PTX ISA, "ldmatrix": matrix m of .x4 is addressed by
    // lanes 8m to 8m + 7; the A fragment's registers are rows 0-7 and 8-15 of k 0-7, then of k 8-15).
    // column(row, k) is the address of element (row, k) with rows row + 1 .. row + 7 after it, or null
    // where those are not whole, 16-byte aligned and inside the matrix (a reads them one by one).
    template <class BlockElement, class ColumnAt>
    __device__ void load_columns(BlockElement a, ColumnAt column, uint4* block_shared_tiles,
                                 OperandElement* block_scratch) {
        static_assert(sizeof(OperandElement) == 2 && Traits::mma_m == 16 && Traits::mma_k == 16,
                      "ldmatrix moves 16-bit m16k16 tiles");
        OperandElement* const scratch = block_scratch + threadIdx.x / kWarp * kDirectLoadScratchElements;
        const unsigned scratch_address = static_cast<unsigned>(__cvta_generic_to_shared(scratch));
        const int piece_k = lane % 16, piece_half = lane / 16; // the piece this lane copies
        const int matrix = lane / 8, matrix_row = lane % 8;    // the row address it gives ldmatrix
        const unsigned fragment_address =
            scratch_address + (((matrix / 2) * 8 + matrix_row) * 16 + (matrix % 2) * 8) * 2;
        load_tiles(block_shared_tiles, [&](int row_tile, int k_tile) {
            const int row = row_tile * Traits::mma_m + piece_half * 8, k = k_tile * Traits::mma_k + piece_k;
            uint4 piece;
            if (const Element* at = column(row, k))
                piece = __ldg(reinterpret_cast<const uint4*>(at));
            else
                piece = make_uint4(pack(a(row, k), a(row + 1, k)), pack(a(row + 2, k), a(row + 3, k)),
                                   pack(a(row + 4, k), a(row + 5, k)), pack(a(row + 6, k), a(row + 7, k)));
            __syncwarp(); // the previous tile's fragments have been read
            *reinterpret_cast<uint4*>(scratch + piece_k * 16 + piece_half * 8) = piece;
            __syncwarp();
            uint4 f;
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(f.x), "=r"(f.y), "=r"(f.z), "=r"(f.w)
                         : "r"(fragment_address)
                         : "memory");
            return f;
        });
        __syncwarp(); // the scratch is the caller's again
    }

    // Every tile of the warp's patch, fragment(row tile, k tile), into registers or its place in
    // shared memory (the first k_tiles_in_registers of each row tile in registers).
    template <class Fragment> __device__ void load_tiles(uint4* block_shared_tiles, Fragment fragment) {
        uint4* warp_shared_tiles = block_shared_tiles + threadIdx.x / kWarp * Traits::row_tiles_per_warp *
                                                            Traits::k_tiles_in_shared_memory * kWarp;
#pragma unroll
        for (int i = 0; i < Traits::row_tiles_per_warp; ++i) {
            const int row_tile = row_warp + i * Traits::row_warps;
#pragma unroll
            for (int j = 0; j < Traits::k_tiles_per_warp; ++j) {
                const uint4 f = fragment(row_tile, k_warp * Traits::k_tiles_per_warp + j);
                if (j < Traits::k_tiles_in_registers)
                    registers[i][j] = f;
                else if (Traits::k_tiles_in_shared_memory > 0)
                    warp_shared_tiles[(i * Traits::k_tiles_in_shared_memory +
                                       (j - Traits::k_tiles_in_registers)) *
                                          kWarp +
                                      lane] = f;
            }
        }
        shared_tiles = warp_shared_tiles;
    }

    __device__ void run(const OperandElement* operand, float* partials) const {
        const int group = lane >> 2, quad = lane & 3;
#pragma unroll
        for (int i = 0; i < Traits::row_tiles_per_warp; ++i) {
            const int row_tile = row_warp + i * Traits::row_warps;
            if (row_tile >= Traits::row_tiles_per_block) break;
            float acc[Traits::batch_tiles_per_block][4];
#pragma unroll
            for (int n = 0; n < Traits::batch_tiles_per_block; ++n)
                acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
            for (int j = 0; j < Traits::k_tiles_per_warp; ++j) {
                const int k_tile = k_warp * Traits::k_tiles_per_warp + j;
                if (k_tile >= Traits::k_tiles_per_block) break;
                const uint4 a = j < Traits::k_tiles_in_registers
                                    ? registers[i][j < Traits::k_tiles_in_registers ? j : 0]
                                    : shared_tiles[(i * Traits::k_tiles_in_shared_memory +
                                                    (j - Traits::k_tiles_in_registers)) *
                                                       kWarp +
                                                   lane];
#pragma unroll
                for (int n = 0; n < Traits::batch_tiles_per_block; ++n)
                    mma(acc[n], a, b_fragment(operand, lane, k_tile, n));
                // Left alone, the compiler loads every k tile's operand fragments up front and
                // spills R's registers for them; a few tiles ahead hide shared memory's latency.
                if (j % kOperandLookahead == kOperandLookahead - 1) asm volatile("" ::: "memory");
            }
            float* out = partials + k_warp * kOperandRows * kPartialsStride;
            const int row = row_tile * Traits::mma_m + group;
#pragma unroll
            for (int n = 0; n < Traits::batch_tiles_per_block; ++n) {
                const int column = n * Traits::mma_n + 2 * quad;
                out[column * kPartialsStride + row] = acc[n][0];
                out[(column + 1) * kPartialsStride + row] = acc[n][1];
                out[column * kPartialsStride + row + 8] = acc[n][2];
                out[(column + 1) * kPartialsStride + row + 8] = acc[n][3];
            }
        }
    }
};

// The sum over k warps of the product at (batch row, block row).
__device__ inline float product_at(const float* partials, int batch_row, int row) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < Traits::k_warps; ++w)
        sum += partials[(w * kOperandRows + batch_row) * kPartialsStride + row];
    return sum;
}

// The forward's products of a unit's G_REC recurrent gates (block rows unit G_REC + k), summed over k
// warps in the order product_at sums them. Four gates (LSTM, sLSTM) are one aligned 16-byte word per k
// warp: a warp's lanes (consecutive units) then read consecutive words, where four scalar loads of rows
// 4 apart met 4-way bank conflicts each.
__device__ inline void recurrent_products(const float* partials, int batch_row, int unit,
                                          float (&sums)[G_REC]) {
    if constexpr (G_REC == 4) {
        static_assert(kPartialsStride % 4 == 0 && kShared.partials % 16 == 0, "16-byte words of partials");
        sums[0] = sums[1] = sums[2] = sums[3] = 0.0f;
#pragma unroll
        for (int w = 0; w < Traits::k_warps; ++w) {
            const float4 v = *reinterpret_cast<const float4*>(
                partials + (w * kOperandRows + batch_row) * kPartialsStride + unit * G_REC);
            sums[0] += v.x, sums[1] += v.y, sums[2] += v.z, sums[3] += v.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < G_REC; ++k)
            sums[k] = product_at(partials, batch_row, unit * G_REC + k);
    }
}

// A load through L2 (not L1): for rows other blocks may have written.
__device__ inline float load_through_l2(const Element* p) {
    if constexpr (Traits::dtype == 0)
        return __ldcg(reinterpret_cast<const float*>(p));
    else {
        const unsigned short bits = __ldcg(reinterpret_cast<const unsigned short*>(p));
        Element x;
        *reinterpret_cast<unsigned short*>(&x) = bits;
        return to_float(x);
    }
}

// Block-wide copy into the operand of its batch rows, each of kLength elements: batch row n starts
// at source(n) (null: a padding row, left alone) and goes to operand[n * kOperandStride, + kLength),
// read through L2. Many loads are in flight at once:
// 16-bit elements go with cp.async straight into shared memory (all of them in flight), fp32
// (rounded to tf32 on the way) and unaligned rows through registers, 16 bytes and a few loads per
// thread at a time. The copy is shared by kThreads threads (the block, or the warps of one k range),
// `thread` the caller's rank among them; the caller's barrier of them makes it visible to them.
// kWait false: the cp.async path leaves its copies in flight as one committed group, which the caller
// waits for with cp.async.wait_group (the other paths have stored their rows on return).
template <int kLength, int kThreads = Traits::threads_per_block, bool kWait = true, class Source>
__device__ inline void gather_rows(OperandElement* operand, Source source, int thread = threadIdx.x) {
    constexpr int kVector = 16 / sizeof(Element), kVectorsPerRow = kLength / kVector;
    constexpr int kVectors = kBatchRows * kVectorsPerRow;
    auto aligned = [](const Element* at) { return reinterpret_cast<unsigned long long>(at) % 16 == 0; };
    if constexpr (!kTf32 && kLength % kVector == 0) {
        for (int index = thread; index < kVectors; index += kThreads) {
            const int n = index / kVectorsPerRow, k = index % kVectorsPerRow * kVector;
            const Element* row = source(n);
            if (!row) continue;
            OperandElement* target = operand + n * kOperandStride + k;
            if (aligned(row + k)) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                                 static_cast<unsigned>(__cvta_generic_to_shared(target))),
                             "l"(row + k)
                             : "memory");
            } else {
#pragma unroll
                for (int e = 0; e < kVector; ++e)
                    target[e] = to_operand(load_through_l2(row + k + e));
            }
        }
        if constexpr (kWait)
            asm volatile("cp.async.wait_all;" ::: "memory");
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
    } else if constexpr (kLength % kVector == 0) {
        constexpr int kInFlight = 4;
        for (int first = thread; first < kVectors; first += kInFlight * kThreads) {
            uint4 packets[kInFlight];
            bool vector_ok[kInFlight];
#pragma unroll
            for (int j = 0; j < kInFlight; ++j) {
                const int index = first + j * kThreads;
                const Element* row = index < kVectors ? source(index / kVectorsPerRow) : nullptr;
                const Element* at = row + index % kVectorsPerRow * kVector;
                vector_ok[j] = row && aligned(at);
                packets[j] =
                    vector_ok[j] ? __ldcg(reinterpret_cast<const uint4*>(at)) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int j = 0; j < kInFlight; ++j) {
                const int index = first + j * kThreads;
                if (index >= kVectors) break;
                const int n = index / kVectorsPerRow, k = index % kVectorsPerRow * kVector;
                const Element* row = source(n);
                if (!row) continue;
                const Element* values = reinterpret_cast<const Element*>(&packets[j]);
#pragma unroll
                for (int e = 0; e < kVector; ++e)
                    operand[n * kOperandStride + k + e] =
                        to_operand(vector_ok[j] ? to_float(values[e]) : load_through_l2(row + k + e));
            }
        }
    } else {
        for (int index = thread; index < kBatchRows * kLength; index += kThreads) {
            const int n = index / kLength, k = index % kLength;
            if (const Element* row = source(n))
                operand[n * kOperandStride + k] = to_operand(load_through_l2(row + k));
        }
    }
}

// The warps of one k range (k warp) and their columns of the operand: where the k warps cover the
// operand's kLength columns exactly, a k range can be gathered by its own warps and multiplied
// as soon as it is there, with a barrier of those warps only (a named barrier, ids 1 to 15; a warp
// alone syncs itself) instead of the block's.
template <int kLength> struct KRange {
    static constexpr int kColumns = Traits::k_tiles_per_warp * Traits::mma_k;
    static constexpr int kThreads = Traits::row_warps * kWarp;
    static constexpr bool kUsable =
        Traits::k_warps * kColumns == kLength && (Traits::row_warps == 1 || Traits::k_warps <= 15);
    int k_warp = threadIdx.x / kWarp / Traits::row_warps;
    int rank = threadIdx.x % kThreads; // among the warps of the range
    __device__ int first_column() const { return k_warp * kColumns; }
    __device__ void sync() const {
        if constexpr (Traits::row_warps == 1)
            __syncwarp();
        else
            asm volatile("bar.sync %0, %1;" ::"r"(1 + k_warp), "r"(kThreads) : "memory");
    }
};

// The launch's layouts with the sizes the kernel was compiled for: only the number of steps and the
// batch-first flag stay run-time values, so that an offset folds to constants and a multiple of t
// (the host launches a kernel only for the problem its traits were solved for). Measured on the
// H100 at (NH, DH) = (12, 64), B = 16, T = 1024: the layouts' 64-bit arithmetic with run-time
// sizes made the backward 1.6 ms slower and the forward's loop 20% longer in PTX. The constants
// cost registers, though (the compiler keeps precomputed addresses live across the steps): ptxas
// spilled at (6, 128), three items per thread, however little of R stayed in registers. So they
// are used with at most two items per thread, and the backend compiles a kernel that spills with
// them once more without them (Traits::compile_time_sizes) before it moves R out of registers.
constexpr bool kCompiledSizes = Traits::compile_time_sizes && kItems <= 2;
__device__ inline TensorLayouts compiled_layouts(const TensorLayouts& given) {
    if constexpr (!kCompiledSizes) return given;
    const long long T = given.sequence.time_steps, B = Traits::batch, NH = Traits::heads,
                    DH = Traits::head_dim;
    TensorLayouts l;
    l.gate_inputs = {T, B, Cell::num_input_gates, NH, DH, given.gate_inputs.batch_first};
    l.recurrent_weights = {G_REC, NH, DH};
    l.bias = {G, NH, DH};
    l.single = {S, B, NH, DH};
    l.sequence = {S, T, B, NH, DH};
    l.gate_slots = {B, NH, G, DH};
    return l;
}

// The chunks of its batch a block runs in turn inside each step of one launch (else one, the
// launch's), the states on chip of each, and whether the operand stays in the block from one step to
// the next (a head in one block, one chunk a launch): else it is gathered each step.
constexpr int kStepChunks = Traits::chunks_in_step ? Traits::batch_chunks : 1;
constexpr int kChunkStates = Cell::num_states * kBatchRows * kUnits; // fp32 states of one chunk
constexpr bool kOperandStays = !Traits::cooperative && !Traits::chunks_in_step;

// Where a block works: its head, batch block, k block and row block, from blockIdx.x, and the chunk
// of its batch block it runs (a batch block of batch_chunks chunks runs them in as many launches, one
// after the other, the whole sequence each, or in turn inside each step; chunk c of batch block k
// holds the rows of part k * batch_chunks + c).
struct BlockPlace {
    int head, group, row_block, k_block, batch_block, batch_base, unit_base, k_base;
    __device__ BlockPlace(int head_offset, int batch_chunk) {
        row_block = blockIdx.x % Traits::row_blocks;
        unit_base = row_block * kUnits;
        k_block = blockIdx.x / Traits::row_blocks % Traits::k_blocks;
        k_base = k_block * kOperandColumns;
        group = blockIdx.x / kGroupBlocks;
        batch_block = group % Traits::batch_blocks;
        head = head_offset + group / Traits::batch_blocks;
        // One chunk per launch: the launch's (one chunk: the kernel as before); inside each step: 0, then
        // each in turn (at_chunk).
        const int chunk = Traits::batch_chunks > 1 && !Traits::chunks_in_step ? batch_chunk : 0;
        batch_base = (batch_block * Traits::batch_chunks + chunk) * kBatchRows;
    }
    // The block at chunk `chunk` of its batch block (chunks inside each step; else the launch's).
    __device__ BlockPlace at_chunk(int chunk) const {
        if constexpr (!Traits::chunks_in_step) return *this;
        BlockPlace place = *this;
        place.batch_base = (batch_block * Traits::batch_chunks + chunk) * kBatchRows;
        return place;
    }
};

// One of a thread's pointwise items: batch row n and unit of the block (and their b and d in the
// head), the same every step; `live` is false past the block's share of its row block's items (all of
// them without a k split) or the batch.
struct PointwiseItem {
    int n, unit, b, d;
    bool live;
    __device__ PointwiseItem(int item, const BlockPlace& place) {
        const int in_share = threadIdx.x + item * Traits::threads_per_block;
        const int i = place.k_block * kShareItems + in_share;
        n = i / kUnits;
        unit = i % kUnits;
        b = place.batch_base + n;
        d = place.unit_base + unit;
        live = in_share < kShareItems && i < kRowBlockItems && b < Traits::batch;
    }
    // Whether the item (batch row n, unit) is in the share of the place's k block.
    static __device__ bool owned(int n, int unit, const BlockPlace& place) {
        return (n * kUnits + unit) / kShareItems == place.k_block;
    }
};

} // namespace flashrnn::fused

// The fused kernels' shared memory is laid out once (tiling/fused_layout.hpp): the bytes the
// tiling model counts for a configuration are the bytes the kernel is launched with
// (fused_backend.cpp: shared_layout(traits, forward).total), for every configuration the model
// accepts, with the partial products' stores free of bank conflicts; and a shared-memory report from
// the driver tightens shared memory, not registers.
#include "cuda/fused/kernels/fused_params.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "fused_request.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <tuple>

using namespace flashrnn;
using flashrnn::testing::request_of;

namespace {

// What the backend launches the kernel with.
std::int64_t launched_bytes(const FusedKernelTraits& t) {
    return fused::shared_layout(t, t.pass == FusedPass::forward).total;
}

// The banks (4-byte words modulo 32) a warp's lanes store an mma's accumulator `a` (0..3) to in the
// partial products (fused_common.cuh, Product::run): lane = 4 group + quad stores batch row
// 2 quad + (a & 1) at block row group + 8 (a >= 2), rows partials_row_stride apart. The offsets of the
// k warp, the batch tile and the row tile are the same in every lane and move no two lanes together.
std::set<long long> accumulator_store_banks(const FusedKernelTraits& t, int a) {
    const long long stride = fused::partials_row_stride<long long>(t);
    std::set<long long> banks;
    for (int lane = 0; lane < 32; ++lane) {
        const int group = lane / 4, quad = lane % 4;
        banks.insert(((2 * quad + (a & 1)) * stride + group + (a >= 2 ? 8 : 0)) % 32);
    }
    return banks;
}

} // namespace

TEST_CASE("fused shared memory: the model counts the bytes the kernel is launched with, for every "
          "configuration it accepts") {
    // (heads, head dimension, batch): odd and small ones, whole and partial mma tiles, split heads,
    // chunks inside each step (with the second operand buffer of their prefetch: (1, 768), B 256).
    const std::tuple<int, int, int> sizes[] = {{1, 5, 1},     {3, 24, 3},   {12, 64, 16}, {2, 100, 17},
                                               {5, 36, 9},    {1, 768, 16}, {4, 48, 33},  {6, 128, 7},
                                               {1, 1536, 64}, {1, 1000, 5}, {2, 256, 40}, {1, 768, 256}};
    int checked = 0, refused = 0, prefetched = 0;
    std::set<std::string> distinct;
    std::string limits_name;
    std::int64_t optin = 0;
    const auto check = [&](const FusedKernelTraits& t) {
        CAPTURE(limits_name);
        CAPTURE(t.key());
        CHECK(t.shared_memory_bytes == launched_bytes(t));
        CHECK(launched_bytes(t) <= optin);
        // The partial products: every store of an accumulator on 32 banks (no conflict), rows of whole
        // 16-byte words from a 16-byte aligned start (the forward's one-word read of four gates).
        for (int a = 0; a < 4; ++a)
            CHECK(accumulator_store_banks(t, a).size() == 32);
        CHECK(fused::partials_row_stride<long long>(t) % 4 == 0);
        CHECK(fused::shared_layout(t, t.pass == FusedPass::forward).partials % 16 == 0);
        ++checked;
        prefetched += t.prefetch_operand;
        distinct.insert(t.key());
    };
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        limits_name = name;
        optin = limits.shared_memory_per_block_optin;
        for (Cell cell : all_cells)
            for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
                for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                    for (auto [heads, head_dim, batch] : sizes)
                        for (int max_threads : {128, 512}) {
                            FusedTilingRequest r = request_of(pass, cell, dtype, heads, head_dim, batch);
                            r.max_threads_per_block = max_threads;
                            if (!fused_tiling_exists(limits, r)) {
                                ++refused;
                                continue;
                            }
                            // The preferred configuration, then those that spill reports move R out
                            // of registers to (more of R in shared memory), then one with less shared
                            // memory than the preferred (a report from the driver).
                            const FusedKernelTraits preferred = choose_fused_tiling(limits, r).traits;
                            check(preferred);
                            FusedTilingRequest spilled = r;
                            FusedKernelTraits t = preferred;
                            for (int round = 0; round < 2 && t.r_registers_per_thread > 0; ++round) {
                                spilled = with_feedback(spilled, {t, t.registers_per_thread, 4});
                                if (!fused_tiling_exists(limits, spilled)) break;
                                t = choose_fused_tiling(limits, spilled).traits;
                                check(t);
                            }
                            const FusedTilingRequest smaller = with_feedback(
                                r, shared_memory_feedback(preferred, preferred.shared_memory_bytes));
                            if (fused_tiling_exists(limits, smaller))
                                check(choose_fused_tiling(limits, smaller).traits);
                        }
    }
    CHECK(prefetched > 0);
    MESSAGE(checked << " configurations checked (" << distinct.size() << " distinct), " << refused
                    << " requests without one");
    CHECK(distinct.size() > 1000);
}

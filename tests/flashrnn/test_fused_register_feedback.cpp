// The fused backend's compile-and-feedback loop without a GPU (compile_fused_tiling,
// tiling/fused_compile_loop.cpp): the tiling model chooses, NVRTC and ptxas compile for the preset's
// architecture, a spill goes back to the model as feedback (fused_backend.cpp's load_kernel reads the
// same numbers from the loaded cubin), until a configuration compiles without spilling or the model
// refuses.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"
#include "tiling/fused_compile_loop.hpp"
#include "tiling/fused_layout.hpp"

#include <doctest/doctest.h>

#if FLASHRNN_WITH_CUDA

#include <chrono>
#include <optional>
#include <tuple>
#include <utility>

#include "nvrtc_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

// The compiler's options as the backend gives them, the kernels cached in `folder`.
CompileOptions as_the_backend(const TemporaryFolder& folder) {
    CompileOptions options = fused_compile_options();
    options.cache_dir = folder.path;
    return options;
}

// The request with R loaded element by element (FLASHRNN_FUSED_DIRECT_R_LOAD=0), the load of every
// fused kernel until 2026-12-02: the cases below that record how the loop ended with it keep it.
FusedTilingRequest with_element_load(FusedTilingRequest request) {
    request.direct_r_load = false;
    return request;
}

// The request without the k split (max_k_blocks 1), as every kernel was before 2026-12-04:
// the loops below were measured so, and with the split their heads compile in more blocks.
FusedTilingRequest without_k_split(FusedTilingRequest request) {
    request.max_k_blocks = 1;
    return request;
}

// Each request's loop ends in a configuration that compiles without spilling, or in the model's refusal.
void check_every(const std::vector<FusedTilingRequest>& requests) {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    const auto start = std::chrono::steady_clock::now();
    int compiles = 0, refused = 0;
    for (const FusedTilingRequest& request : requests) {
        const FusedCompileResult result = compile_fused_tiling(limits, request, options);
        compiles += result.attempts;
        CAPTURE(result.traits.key());
        CAPTURE(result.refusal);
        if (!result.refusal.empty()) {
            ++refused;
            MESSAGE("refused after " << result.attempts << " attempts: " << result.refusal);
        }
        MESSAGE(to_string(request.pass)
                << " " << cell_info(request.cell).name << " " << to_string(request.dtype) << " B "
                << request.batch << ": " << result.traits.batch_chunks << " chunk(s)"
                << std::string(result.traits.chunks_in_step ? " inside each step" : "") << ", "
                << result.registers_per_thread << " registers, " << result.attempts << " compile(s)");
        CHECK(result.refusal.empty());
        CHECK(result.local_bytes == 0);
        CHECK(result.registers_per_thread <= 255);
    }
    MESSAGE(requests.size() << " requests, " << compiles << " compiles, " << refused << " refused, in "
                            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                            << " s");
}

} // namespace

TEST_CASE("fused register feedback: chunked batches compile without spilling on the H100 (a subset)") {
    check_every({
        request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, 256),
        request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 768, 1024),
        request_of(FusedPass::backward, Cell::slstm, DType::fp32, 12, 64, 100),
        request_of(FusedPass::backward, Cell::elman, DType::fp16, 1, 768, 64),
        request_of(FusedPass::backward, Cell::gru, DType::fp16, 1, 768, 256),   // 2 chunks inside each step
        request_of(FusedPass::forward, Cell::elman, DType::bf16, 1, 768, 1024), // 24 items per thread
        // Refused on the H100 (no configuration after 16 attempts) before chunks inside each step had
        // their register cost: every spill of one raised the overhead of all configurations.
        request_of(FusedPass::forward, Cell::gru, DType::fp16, 1, 768, 201),
        request_of(FusedPass::backward, Cell::gru, DType::fp16, 1, 768, 201),
    });
}

// The multicast gather at (1, 768) on the H100 keeps its clusters through the compiler's feedback.
// With R loaded element by element (the load until 2026-12-02) the backward with one row warp per k range (16
// units per block, B 13 and 16) compiles at the first attempt; with two (B 37) and with chunks inside each
// step (B 64), and the forward at B 256, the first choice spills with the gather (96, 184 and 48 bytes,
// 2026-11-25) as it does without it (80, 136, 48): the feedback ends in a configuration with the gather and
// no spill. The backward's at B 37 holds at least as much of R in registers as the loop without clusters ends
// in. At B 64 it no longer does since the partial products' rows are padded (a regression of the element
// load only, 2026-12-02): with the gather ptxas spills 8 bytes at 168 registers in each configuration of 2
// chunks inside each step the loop tries, whatever R it holds (6, 5, 4 tiles), and the loop ends at 12 R
// registers against 60 without clusters; the direct load, the default, compiles its first choice there
// (below). The forward's holds less (40 R registers in 2 chunks inside each
// step, against 68 in one chunk) and was the faster on the H100, 11.73 against 15.67 ms (docs/benchmarks.md,
// "Large batches").
TEST_CASE("fused register feedback: the multicast gather at (1, 768) on the H100 keeps its clusters") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    struct MulticastCase {
        FusedPass pass;
        int batch;
        bool first_compiles;
    };
    for (const MulticastCase& m : {MulticastCase{FusedPass::backward, 13, true},
                                   {FusedPass::backward, 16, true},
                                   {FusedPass::backward, 37, false},
                                   {FusedPass::backward, 64, false},
                                   {FusedPass::forward, 256, false}}) {
        CAPTURE(m.batch);
        CAPTURE(to_string(m.pass));
        const FusedTilingRequest request =
            with_element_load(request_of(m.pass, Cell::lstm, DType::bf16, 1, 768, m.batch));
        CHECK(choose_fused_tiling(limits, request).traits.multicast_gather);
        const FusedCompileResult kept = compile_fused_tiling(limits, request, options);
        CAPTURE(kept.traits.key());
        CHECK(kept.refusal.empty());
        CHECK(kept.traits.multicast_gather);
        CHECK(kept.local_bytes == 0);
        CHECK((kept.attempts == 1) == m.first_compiles);
        // With the direct load (the default) the gather is kept too, the backward's first choice
        // compiles, and the forward's at B 256 ends where the element load's loop does (4 compiles).
        const FusedCompileResult direct = compile_fused_tiling(
            limits, request_of(m.pass, Cell::lstm, DType::bf16, 1, 768, m.batch), options);
        CAPTURE(direct.traits.key());
        CHECK(direct.refusal.empty());
        CHECK(direct.traits.multicast_gather);
        CHECK(direct.traits.direct_r_load);
        CHECK(direct.local_bytes == 0);
        CHECK(direct.attempts <= kept.attempts);
        CHECK((direct.attempts == 1) == (m.pass == FusedPass::backward));
        if (m.first_compiles || m.pass == FusedPass::forward || m.batch == 64) continue;
        const FusedCompileResult without = compile_fused_tiling(limits, without_cluster(request), options);
        CAPTURE(without.traits.key());
        CHECK_FALSE(without.traits.multicast_gather);
        CHECK(kept.traits.r_registers_per_thread >= without.traits.r_registers_per_thread);
    }
}

// The chunks' operand prefetch (a second operand buffer, chunk c + 1's gather during chunk c's
// product) at (1, 768) on the H100, LSTM bf16: the loop ends in it exactly where its buffer fits
// beside the rest of the configuration, the forward at B 256 (2 chunks inside each step, 222592
// bytes); the backward's chunks (B 64 to 256, one buffer 98560 bytes beside 194816 or more) keep one.
TEST_CASE("fused register feedback: the chunks' operand prefetch at (1, 768) on the H100") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    for (const std::pair<FusedPass, int>& request :
         {std::pair{FusedPass::backward, 64}, std::pair{FusedPass::backward, 256},
          std::pair{FusedPass::forward, 256}}) {
        const FusedPass pass = request.first;
        const int batch = request.second;
        CAPTURE(batch);
        CAPTURE(to_string(pass));
        const FusedCompileResult kept = compile_fused_tiling(
            limits, with_element_load(request_of(pass, Cell::lstm, DType::bf16, 1, 768, batch)), options);
        CAPTURE(kept.traits.key());
        CHECK(kept.refusal.empty());
        CHECK(kept.local_bytes == 0);
        REQUIRE(kept.traits.chunks_in_step);
        FusedKernelTraits doubled = kept.traits;
        doubled.prefetch_operand = true;
        const std::int64_t bytes = fused::shared_layout(doubled, pass == FusedPass::forward).total;
        CHECK(kept.traits.prefetch_operand == (bytes <= limits.shared_memory_per_block_optin));
        CHECK(kept.traits.prefetch_operand == (pass == FusedPass::forward));
    }
}

// The loop's fallback: a refusal after multicast kernels' feedback starts over without clusters (the
// request the loop began with); a refusal without such feedback stands.
TEST_CASE(
    "fused register feedback: a refusal after the multicast gather's feedback starts over without clusters") {
    const DeviceLimits limits = preset("h100_sxm");
    const FusedTilingRequest first = request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, 37);
    const FusedKernelTraits multicast = choose_fused_tiling(limits, first).traits;
    REQUIRE(multicast.multicast_gather);
    const FusedTilingRequest fed =
        after_register_shortage(after_register_shortage(first, multicast, 128, 96), multicast, 128, 96);
    CHECK_FALSE(fed.compile_time_sizes);
    REQUIRE(fed.feedback.size() == 1);
    const std::optional<FusedTilingRequest> next = after_refusal(first, fed);
    REQUIRE(next.has_value());
    CHECK(next->cluster == FusedCluster::never);
    CHECK(next->feedback.empty());
    CHECK(next->compile_time_sizes);
    CHECK_FALSE(choose_fused_tiling(limits, *next).traits.multicast_gather);
    CHECK_FALSE(after_refusal(first, *next).has_value()); // without clusters and spills the refusal stands
    // After spills without clusters: once more with the spills excluding only blocks whose threads may
    // have as few registers, the feedback kept; then the refusal stands.
    const FusedKernelTraits plain = choose_fused_tiling(limits, without_cluster(first)).traits;
    const FusedTilingRequest spilled = after_register_shortage(without_cluster(first), plain, 128, 0);
    const std::optional<FusedTilingRequest> relaxed = after_refusal(first, spilled);
    REQUIRE(relaxed.has_value());
    CHECK_FALSE(relaxed->spills_exclude_every_block_size);
    CHECK(relaxed->feedback.size() == spilled.feedback.size());
    CHECK(relaxed->cluster == FusedCluster::never);
    CHECK_FALSE(after_refusal(first, *relaxed).has_value());
}

// The largest LSTM bf16 heads at the GPU test's B 3 on the H100, through the backend's feedback loop:
// the model's largest (2112 forward and backward, docs/kernels.md "Largest head dimension") spills in
// the backward until the model refuses (ptxas needs about 69 registers besides R, its accumulators and
// items, where the model starts from 42), and so does 1600 (its 256-thread blocks too, after the
// refusal: ptxas uses all 255 registers however little of R they hold); 1616 compiles without
// spilling, and ran forward and backward on the H100 and the H200 against the float64 reference (the
// GPU test "the largest head dimension of this GPU"). Feasibility after feedback is not monotone in
// the head size.
TEST_CASE("fused register feedback: LSTM bf16 on the H100 with the element load, the model's largest head "
          "spills, 1616 compiles") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    auto loop = [&](FusedPass pass, int head_dim) {
        const FusedCompileResult result = compile_fused_tiling(
            limits,
            without_k_split(with_element_load(request_of(pass, Cell::lstm, DType::bf16, 1, head_dim, 3))),
            options);
        MESSAGE("DH " << head_dim << " " << to_string(pass) << ": "
                      << std::string(result.refusal.empty() ? "" : "refused, ") << result.registers_per_thread
                      << " registers (" << result.traits.registers_per_thread << " estimated), "
                      << result.traits.threads_per_block << " threads, " << result.attempts << " compile(s)");
        return result;
    };
    const FusedCompileResult largest = loop(FusedPass::backward, 2112);
    CHECK_FALSE(largest.refusal.empty());
    CHECK(largest.local_bytes > 0);
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        const FusedCompileResult run = loop(pass, 1616);
        CAPTURE(run.refusal);
        CHECK(run.refusal.empty());
        CHECK(run.local_bytes == 0);
    }
}

// A spill excludes only blocks whose threads may have as few registers, after the strict rule's
// refusal (after_refusal): LSTM bf16's backward at DH 1536, B 3 on the H100 spilled at 512 threads
// (128 registers) and at 384 (168) with every R its blocks could hold, and was refused after 15
// compiles while its spills excluded every block size (ptxas for sm_90, 2026-12-01); with the 384-
// thread blocks left to the raised register estimate it compiles without spilling. A request that
// ends without a refusal ends as before (the strict rule first): DH 1408 at 512 threads.
TEST_CASE("fused register feedback: after a refusal, a spill excludes only blocks of as few registers") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    const FusedCompileResult relaxed =
        compile_fused_tiling(limits,
                             without_k_split(with_element_load(
                                 request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 1536, 3))),
                             options);
    CAPTURE(relaxed.traits.key());
    CAPTURE(relaxed.refusal);
    MESSAGE("DH 1536 backward: " << relaxed.traits.threads_per_block << " threads, "
                                 << relaxed.registers_per_thread << " registers, " << relaxed.attempts
                                 << " compiles");
    CHECK(relaxed.refusal.empty());
    CHECK(relaxed.spills_relaxed);
    CHECK(relaxed.local_bytes == 0);
    CHECK(relaxed.traits.threads_per_block < 512);
    const FusedCompileResult strict =
        compile_fused_tiling(limits,
                             without_k_split(with_element_load(
                                 request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 1408, 3))),
                             options);
    CAPTURE(strict.refusal);
    CHECK(strict.refusal.empty());
    CHECK_FALSE(strict.spills_relaxed);
    CHECK(strict.local_bytes == 0);
    CHECK(strict.traits.threads_per_block == 512);
}

// A refusal after the spills' feedback starts over with more k blocks (with_more_k_blocks): LSTM bf16's
// forward at DH 2304 on the h200 preset, the model's first choice 64 row x 2 k blocks, spills, and the
// feedback refuses at 2 and then 4 k blocks (ptxas for sm_90, 2026-12-04); the loop starts over with at
// least 5 (6: 144 k tiles) and compiles. With max_k_blocks 2 it cannot, and the refusal is the one of
// the request as asked.
TEST_CASE("fused register feedback: a refusal after spills starts over with more k blocks") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h200");
    FusedTilingRequest request = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 1, 2304, 16);
    REQUIRE(choose_fused_tiling(limits, request).traits.k_blocks == 2);
    const FusedCompileResult more = compile_fused_tiling(limits, request, options);
    CAPTURE(more.history);
    CAPTURE(more.refusal);
    MESSAGE("DH 2304 forward: " << more.traits.k_blocks << " k blocks, " << more.attempts << " compiles");
    CHECK(more.compiled());
    CHECK(more.traits.k_blocks > 2);
    CHECK(more.history.find("again with at least") != std::string::npos);
    request.max_k_blocks = 2;
    const FusedCompileResult capped = compile_fused_tiling(limits, request, options);
    CHECK_FALSE(capped.refusal.empty());
    CHECK(capped.history.find("again with at least") == std::string::npos);
    CHECK(capped.refusal.find("forward lstm bf16, NH 1, DH 2304") != std::string::npos);
}

// R loaded directly (FusedKernelTraits::direct_r_load, the default since 2026-12-02): the load
// element by element held more registers than the steps (nvdisasm's liveness, LSTM bf16 backward at
// DH 1600, B 3, 256 threads: 252 live in the load, 145 in the step loop), so ptxas spilled where the
// steps fit. Loaded by words (forward) and 16-byte pieces through ldmatrix (backward), the model's
// first choice compiles without spilling at the model's largest heads of docs/kernels.md on the H100
// (LSTM bf16 2112, refused after the feedback without it: the test above; Elman bf16 4224) and at
// (1, 768) B 256, whose backward the loop without it ends in 384 threads with 20 registers of R.
TEST_CASE("fused register feedback: with R loaded directly the model's first choice compiles") {
    TemporaryFolder folder;
    const CompileOptions options = as_the_backend(folder);
    const DeviceLimits limits = preset("h100_sxm");
    struct DirectCase {
        FusedPass pass;
        Cell cell;
        DType dtype;
        int head_dim, batch;
    };
    for (const DirectCase& c : {DirectCase{FusedPass::backward, Cell::lstm, DType::bf16, 2112, 3},
                                {FusedPass::forward, Cell::lstm, DType::bf16, 2112, 3},
                                {FusedPass::backward, Cell::lstm, DType::fp16, 2112, 16},
                                {FusedPass::backward, Cell::elman, DType::bf16, 4224, 3},
                                {FusedPass::backward, Cell::lstm, DType::bf16, 768, 256}}) {
        FusedTilingRequest request = request_of(c.pass, c.cell, c.dtype, 1, c.head_dim, c.batch);
        request.direct_r_load = true;
        const FusedCompileResult direct = compile_fused_tiling(limits, request, options);
        CAPTURE(direct.traits.key());
        CAPTURE(direct.refusal);
        MESSAGE(to_string(c.pass) << " " << cell_info(c.cell).name << " " << to_string(c.dtype) << " DH "
                                  << c.head_dim << " B " << c.batch << ": " << direct.traits.threads_per_block
                                  << " threads, " << direct.traits.r_registers_per_thread << " R registers, "
                                  << direct.registers_per_thread << " used");
        CHECK(direct.traits.direct_r_load);
        CHECK(direct.refusal.empty());
        CHECK(direct.attempts == 1);
        CHECK(direct.local_bytes == 0);
    }
    // The loop without it at (1, 768) B 256 ends with less of R in registers.
    FusedTilingRequest b256 =
        with_element_load(request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, 256));
    const FusedCompileResult element_wise = compile_fused_tiling(limits, b256, options);
    b256.direct_r_load = true;
    const FusedCompileResult direct = compile_fused_tiling(limits, b256, options);
    CHECK_FALSE(element_wise.traits.direct_r_load);
    CHECK(direct.traits.r_registers_per_thread > element_wise.traits.r_registers_per_thread);
    // A small head the element load cannot run: LSTM bf16's backward at (2, 196), B 5, one block per
    // head of 256 threads with 196 R registers, spills in the load and is refused after the feedback
    // (2026-12-02); the direct load compiles the same choice at the first attempt.
    const FusedTilingRequest small_head = request_of(FusedPass::backward, Cell::lstm, DType::bf16, 2, 196, 5);
    const FusedCompileResult refused =
        compile_fused_tiling(limits, without_k_split(with_element_load(small_head)), options);
    CHECK_FALSE(refused.refusal.empty());
    const FusedCompileResult loaded = compile_fused_tiling(limits, small_head, options);
    CHECK(loaded.refusal.empty());
    CHECK(loaded.attempts == 1);
    CHECK(loaded.traits.direct_r_load);
    // fp32 (tf32 fragments) keeps the element-by-element load, and so does a backward whose operand
    // buffer cannot lend every warp its scratch (4 heads of 48, B 3: 8 x 200 elements for 12 warps).
    FusedTilingRequest fp32 = request_of(FusedPass::backward, Cell::lstm, DType::fp32, 1, 768, 16);
    fp32.direct_r_load = true;
    CHECK_FALSE(choose_fused_tiling(limits, fp32).traits.direct_r_load);
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        FusedTilingRequest small = request_of(pass, Cell::lstm, DType::bf16, 4, 48, 3);
        small.direct_r_load = true;
        const FusedKernelTraits t = choose_fused_tiling(limits, small).traits;
        CAPTURE(t.threads_per_block);
        CHECK(t.direct_r_load == (pass == FusedPass::forward));
        CHECK(t.direct_r_load == (pass == FusedPass::forward || fused::direct_load_scratch_fits(t)));
    }
}

// The forward with the cluster exchange (distributed shared memory, sm_90) at the shapes the GPU tests
// run it: NVRTC compiles it, and ptxas fits it without a spill.
TEST_CASE("fused register feedback: the cluster exchange's forward compiles without spilling on the H100") {
    std::vector<FusedTilingRequest> requests;
    for (auto [cell, dtype, heads, head_dim] : {std::tuple{Cell::lstm, DType::bf16, 1, 768},
                                                {Cell::lstm, DType::bf16, 12, 64},
                                                {Cell::lstm, DType::fp32, 2, 128},
                                                {Cell::gru, DType::bf16, 2, 96}}) {
        FusedTilingRequest r = request_of(FusedPass::forward, cell, dtype, heads, head_dim, 16);
        r.cluster = FusedCluster::always;
        requests.push_back(r);
    }
    check_every(requests);
    // Its transaction barriers are static shared memory (16 bytes) of its kernels only: the others have
    // none beside the dynamic shared memory the model counts.
    TemporaryFolder folder;
    for (FusedCluster cluster : {FusedCluster::never, FusedCluster::always}) {
        FusedTilingRequest r = request_of(FusedPass::forward, Cell::lstm, DType::bf16, 12, 64, 16);
        r.cluster = cluster;
        const CompiledKernel kernel =
            compile_fused_kernel(fused_kernel_source(r.pass), choose_fused_tiling(preset("h100"), r).traits,
                                 "sm_90", in_folder(folder.path));
        CAPTURE(kernel.log);
        CHECK((kernel.log.find("16 bytes smem") != std::string::npos) == (cluster == FusedCluster::always));
    }
}

// Every cell x dtype x pass at (1, 768) and (12, 64), B in {1, 2, 16, 64, 100, 256, 1024}: 336
// requests, minutes on two cores; run by hand with flashrnn_tests -tc='*full grid*' --no-skip.
// Last run (2 cores): 647 compiles in 434 s, every request ends without a spill. Before the forward
// cost of further items (fused_tiling.cpp), GRU 16-bit forward (1, 768) B 1024 still spilled after
// 16 attempts and Elman 16-bit was refused after 3 (24 items per thread).
TEST_CASE("fused register feedback: the full grid on the H100" * doctest::skip()) {
    std::vector<FusedTilingRequest> requests;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
            for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
                for (auto [heads, head_dim] : {std::pair{1, 768}, std::pair{12, 64}})
                    for (int batch : {1, 2, 16, 64, 100, 256, 1024})
                        requests.push_back(request_of(pass, cell, dtype, heads, head_dim, batch));
    check_every(requests);
}

#endif

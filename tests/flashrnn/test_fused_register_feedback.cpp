// The fused backend's compile-and-feedback loop without a GPU: the tiling model chooses, NVRTC and
// ptxas compile for the preset's architecture, a spill goes back to the model as feedback
// (fused_backend.cpp's load_kernel reads the same numbers from the loaded cubin), until a
// configuration compiles without spilling or the model refuses.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"

#include <doctest/doctest.h>

#if FLASHRNN_WITH_CUDA

#include <chrono>
#include <tuple>

#include "nvrtc_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

namespace {

struct LoopResult {
    FusedKernelTraits traits;
    RegisterReport registers;
    int attempts = 0;
    std::string refusal; // the model's explanation when no configuration is left
};

// load_kernel's loop for the registers (fused_backend.cpp): a spill first drops the clusters (the
// cluster exchange, the multicast gather), then the compile-time sizes, then goes back as feedback
// with the registers ptxas used plus the spilled ones.
LoopResult compile_until_no_spill(const DeviceLimits& limits, FusedTilingRequest request,
                                  const CompileOptions& options) {
    LoopResult out;
    for (out.attempts = 1; out.attempts <= 16; ++out.attempts) {
        try {
            out.traits = choose_fused_tiling(limits, request).traits;
        } catch (const TilingError& e) {
            out.refusal = e.what();
            return out;
        }
        const CompiledKernel kernel =
            compile_fused_kernel(fused_kernel_source(request.pass), out.traits,
                                 architecture_of(limits.compute_capability()), options);
        out.registers = kernel.registers;
        const std::int64_t local = kernel.registers.stack_frame_bytes;
        if (local == 0) return out;
        if (out.traits.cluster_exchange || out.traits.multicast_gather) { // clusters spilled: without them
            request = without_cluster(request);
            continue;
        }
        if (request.compile_time_sizes) {
            request.compile_time_sizes = false;
            continue;
        }
        request = with_feedback(
            request,
            {out.traits, kernel.registers.registers_per_thread + static_cast<int>((local + 3) / 4), local});
    }
    out.attempts = 16;
    out.refusal = "still spilling after 16 attempts";
    return out;
}

// Each request's loop ends in a configuration that compiles without spilling, or in the model's refusal.
void check_every(const std::vector<FusedTilingRequest>& requests) {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path);
    options.extra_options = {"--use_fast_math"}; // as the backend compiles
    const DeviceLimits limits = preset("h100_sxm");
    const auto start = std::chrono::steady_clock::now();
    int compiles = 0, refused = 0;
    for (const FusedTilingRequest& request : requests) {
        const LoopResult result = compile_until_no_spill(limits, request, options);
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
                << result.registers.registers_per_thread << " registers, " << result.attempts
                << " compile(s)");
        CHECK(result.refusal.empty());
        CHECK(result.registers.stack_frame_bytes == 0);
        CHECK(result.registers.registers_per_thread <= 255);
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

// The multicast gather's backward at (1, 768) on the H100: with one row warp per k range (16 units
// per block, B 13 and 16) it compiles at the first attempt; with two (32 units, B 37 and 64) its few
// registers more spill at the 128-register cap of 512 threads (96 and 184 bytes, 2026-11-24), and the
// loop drops the clusters, as load_kernel does (the GPU test "the multicast gather after the barrier,
// odd batches" checks the kernel loaded on the device).
TEST_CASE("fused register feedback: the multicast gather's backward at (1, 768) on the H100") {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path);
    options.extra_options = {"--use_fast_math"}; // as the backend compiles
    for (const auto& [batch, kept] : {std::pair{13, true}, {16, true}, {37, false}}) {
        const int b = batch; // named again: clang 14 does not capture a structured binding
        const bool multicast_kept = kept;
        CAPTURE(b);
        const FusedTilingRequest request =
            request_of(FusedPass::backward, Cell::lstm, DType::bf16, 1, 768, b);
        CHECK(choose_fused_tiling(preset("h100_sxm"), request).traits.multicast_gather);
        const LoopResult result = compile_until_no_spill(preset("h100_sxm"), request, options);
        CAPTURE(result.traits.key());
        CHECK(result.refusal.empty());
        CHECK(result.traits.multicast_gather == multicast_kept);
        CHECK((result.attempts == 1) == multicast_kept);
    }
}

// The largest LSTM bf16 heads at the GPU test's B 3 on the H100, through the backend's feedback loop:
// the model's largest (2112 forward and backward, docs/kernels.md "Largest head dimension") spills in
// the backward until the model refuses (ptxas needs about 69 registers besides R, its accumulators and
// items, where the model starts from 42), and so do 1408, 1536 and 1600; 1616 compiles without
// spilling, and ran forward and backward on the H100 against the float64 reference (the GPU test "the
// largest head dimension of this GPU"). Feasibility after feedback is not monotone in the head size.
TEST_CASE("fused register feedback: LSTM bf16 on the H100, the model's largest head spills, 1616 compiles") {
    TemporaryFolder folder;
    CompileOptions options = in_folder(folder.path);
    options.extra_options = {"--use_fast_math"}; // as the backend compiles
    const DeviceLimits limits = preset("h100_sxm");
    auto loop = [&](FusedPass pass, int head_dim) {
        const LoopResult result = compile_until_no_spill(
            limits, request_of(pass, Cell::lstm, DType::bf16, 1, head_dim, 3), options);
        MESSAGE("DH " << head_dim << " " << to_string(pass) << ": "
                      << std::string(result.refusal.empty() ? "" : "refused, ")
                      << result.registers.registers_per_thread << " registers ("
                      << result.traits.registers_per_thread << " estimated), "
                      << result.traits.threads_per_block << " threads, " << result.attempts << " compile(s)");
        return result;
    };
    const LoopResult largest = loop(FusedPass::backward, 2112);
    CHECK_FALSE(largest.refusal.empty());
    CHECK(largest.registers.stack_frame_bytes > 0);
    for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
        const LoopResult run = loop(pass, 1616);
        CAPTURE(run.refusal);
        CHECK(run.refusal.empty());
        CHECK(run.registers.stack_frame_bytes == 0);
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

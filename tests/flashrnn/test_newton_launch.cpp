// The Newton family's tiling (tiling/scan_launch.hpp, choose_reduction_launch) and cost model
// (newton/passes.hpp), host-only: every preset, both cells, both dtypes, a grid of sizes.
#include <doctest/doctest.h>

#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

using namespace flashrnn;

TEST_CASE("newton launch: the model's choice is compiled, within the limits, and covers the sequence") {
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        for (newton::Cell cell : newton::all_cells)
            for (DType dtype : {DType::fp32, DType::bf16})
                for (std::int64_t batch : {1LL, 32LL})
                    for (std::int64_t units : {1LL, 256LL, 2048LL})
                        for (std::int64_t steps : {1LL, 31LL, 512LL, 2048LL, 8193LL, 65536LL, 1LL << 22}) {
                            CAPTURE(name);
                            CAPTURE(newton::to_string(cell));
                            CAPTURE(batch * units);
                            CAPTURE(steps);
                            const newton::Problem problem{cell, dtype, {steps, batch, units}};
                            const ReductionLaunch r = newton::solver_reduction_launch(limits, problem);
                            const ScanKernel kernel = newton::reduction_kernel(cell);
                            CHECK(is_compiled(kernel, r.config));
                            CHECK(r.config.threads_per_block <= limits.max_threads_per_block);
                            CHECK(r.config.threads_per_block % limits.warp_size == 0);
                            CHECK(r.tile ==
                                  std::int64_t{r.config.elements_per_thread} * r.config.threads_per_block);
                            CHECK(r.segment_length == r.max_sequential_steps * r.tile);
                            CHECK(r.segments >= 1);
                            CHECK(r.segments <= kReductionMaxSegments);
                            CHECK(r.segments * r.segment_length >= steps);
                            CHECK((r.segments - 1) * r.segment_length < steps);
                            if (r.segments > 1) {
                                CHECK(r.max_sequential_steps >= kReductionMinTilesPerSegment);
                                CHECK(r.launches() == 3);
                                // About the blocks wanted (the nearest segment count with no segment empty).
                                CHECK(problem.shape.sequences() * r.segments <=
                                      2 * std::int64_t{kReductionBlocksPerSm} * limits.sm_count);
                            } else {
                                CHECK(r.workspace_bytes == 0);
                                CHECK(r.launches() == 1);
                            }
                            // The fused passes' configurations: compiled, one kernel each.
                            CHECK(is_compiled(newton::fused_kernel(cell),
                                              newton::fused_config(limits, problem)));
                            CHECK(is_compiled(newton::fused_backward_kernel(cell),
                                              newton::fused_backward_config(limits, problem)));
                            const newton::CostEstimate cost = newton::estimate_cost(limits, problem, {});
                            CHECK(cost.newton_forward.seconds > 0);
                            CHECK(cost.sequential_forward.seconds > 0);
                            CHECK(cost.newton_forward.launches == 2 + 3 * (1 + r.launches()));
                            CHECK(cost.bandwidth > 0);
                        }
    }
}

// The fused backward's measured preference (scan_launch.cpp, fused_target_tile): one warp of 4 steps per
// thread with many sequences (the H200's sweep, newton_bench --fused-sweep, docs/benchmarks.md), where
// the forward takes one warp of 8 steps per thread; a longer tile for few long sequences, within
// FlashLSTM's registers (4 x 512 would need more than the block has).
TEST_CASE("newton launch: the fused backward's configuration on the H100 and the H200") {
    for (const char* gpu : {"h100_sxm", "h200"}) {
        CAPTURE(gpu);
        const DeviceLimits limits = preset(gpu);
        for (newton::Cell cell : newton::all_cells)
            for (DType dtype : {DType::fp32, DType::bf16})
                for (std::int64_t steps : {2048LL, 8192LL}) {
                    CAPTURE(newton::to_string(cell));
                    CAPTURE(steps);
                    const newton::Problem many{cell, dtype, {steps, 32, 2048}};
                    CHECK(newton::fused_backward_config(limits, many) ==
                          ScanConfig{4, 32, ScanAccess::shared});
                    CHECK(newton::fused_config(limits, many) == ScanConfig{8, 32, ScanAccess::shared});
                }
        for (DType dtype : {DType::fp32, DType::bf16})
            CHECK(newton::fused_backward_config(limits, {newton::Cell::flash_gru, dtype, {65536, 1, 256}}) ==
                  ScanConfig{4, 512, ScanAccess::shared});
        CHECK(
            newton::fused_backward_config(limits, {newton::Cell::flash_lstm, DType::fp32, {65536, 1, 256}}) ==
            ScanConfig{4, 256, ScanAccess::shared});
    }
    CHECK(newton::fused_backward_kernel(newton::Cell::flash_lstm) == ScanKernel::newton_fused_backward_lstm);
    CHECK(parse_scan_kernel("newton_fused_backward_gru") == ScanKernel::newton_fused_backward_gru);
}

TEST_CASE("newton launch: examples on the H100") {
    const DeviceLimits h100 = preset("h100");
    // One long sequence: the grid level, 4 blocks per SM in segments of 4 tiles or more.
    const ReductionLaunch one = newton::solver_reduction_launch(
        h100, {newton::Cell::flash_gru, DType::fp32, {.time_steps = 1 << 22, .batch = 1, .units = 1}});
    CHECK(one.segments == 512);
    CHECK(one.max_sequential_steps == 4);
    // B = 1, 256 units, T = 65536: two segments per sequence give 512 blocks (the H100 wants 528).
    const ReductionLaunch narrow = newton::solver_reduction_launch(
        h100, {newton::Cell::flash_lstm, DType::bf16, {.time_steps = 65536, .batch = 1, .units = 256}});
    CHECK(narrow.segments == 2);
    CHECK(narrow.segments * narrow.max_sequential_steps * narrow.tile >= 65536);
    // Wide problems fill the GPU with one block per sequence: every tile in turn.
    const ReductionLaunch wide = newton::solver_reduction_launch(
        h100, {newton::Cell::flash_gru, DType::fp32, {.time_steps = 8192, .batch = 32, .units = 2048}});
    CHECK(wide.segments == 1);
    CHECK(wide.max_sequential_steps * wide.tile >= 8192);
}

TEST_CASE("newton launch: an impossible device is a TilingError naming its conflicting limits") {
    DeviceLimits tiny = preset("h100");
    tiny.max_registers_per_thread = 40; // the reduction needs at least 32 + 4 x (2 loads x 2 + 4) = 64
    try {
        newton::solver_reduction_launch(
            tiny, {newton::Cell::flash_gru, DType::fp32, {.time_steps = 1024, .batch = 1, .units = 8}});
        FAIL("expected a TilingError");
    } catch (const TilingError& e) {
        const std::string what = e.what();
        CHECK(what.find("scan launch (newton_reduce_diagonal): no compiled configuration for 8 sequences of "
                        "length 1024 on h100_sxm") == 0);
        CHECK(what.find("registers per thread within the per-thread limit") != std::string::npos);
        CHECK_FALSE(e.conflicts().empty());
    }
}

TEST_CASE("newton launch: the cost model at the issue's corners, from bandwidth and SMs") {
    const DeviceLimits h100 = preset("h100");
    const newton::Problem narrow{
        newton::Cell::flash_gru, DType::fp32, {.time_steps = 65536, .batch = 1, .units = 256}};
    const newton::CostEstimate cost = newton::estimate_cost(h100, narrow, {});
    CHECK(cost.bandwidth == doctest::Approx(0.8 * 3.35e12));
    // The sequential chain: 65536 steps of FlashGRU fp32 in one wave (256 threads, 8 warps); measured on
    // the H200 (the same SMs and clock): 5.693 ms for this problem (docs/benchmarks.md, Newton
    // section, "The sequential kernels without subnormals").
    CHECK(cost.sequential_forward.latency_seconds == doctest::Approx(65536 * 0.0869e-6));
    CHECK(cost.sequential_forward.seconds == doctest::Approx(5.693e-3).epsilon(0.1));
    CHECK(cost.newton_forward.launches == 2 + 3 * 4);
    // A device with half the bandwidth: bandwidth-bound estimates double.
    DeviceLimits slow = h100;
    slow.memory_bandwidth /= 2;
    const newton::Problem wide{
        newton::Cell::flash_gru, DType::fp32, {.time_steps = 512, .batch = 32, .units = 2048}};
    const newton::CostEstimate fast_cost = newton::estimate_cost(h100, wide, {});
    const newton::CostEstimate slow_cost = newton::estimate_cost(slow, wide, {});
    CHECK(slow_cost.newton_forward.bytes == fast_cost.newton_forward.bytes);
    CHECK(slow_cost.newton_forward.seconds > 1.9 * (fast_cost.newton_forward.seconds - 14 * 4e-6));
    // bf16 halves the bytes of the fused forward and of the sequential one (its tiles copy whole sectors).
    const newton::Problem wide_bf16{newton::Cell::flash_gru, DType::bf16, wide.shape};
    const newton::CostEstimate bf16_cost = newton::estimate_cost(h100, wide_bf16, {});
    CHECK(bf16_cost.fused_forward.bytes == doctest::Approx(fast_cost.fused_forward.bytes / 2));
    CHECK(bf16_cost.sequential_forward.bytes == doctest::Approx(fast_cost.sequential_forward.bytes / 2));
    CHECK(fast_cost.sequential_forward.bytes == doctest::Approx(32.0 * 2048 * 512 * (3 + 1) * 4));
}

// The fused forward's instruction term against the H200's measurements (issue 16, 2026-12-02,
// docs/benchmarks.md: B 32 x 2048 units, fused forward ms at 3 and, for bf16, 2 Newton iterations): the
// estimate within 10% where the kernel is bound by its instructions, and no issue term without a clock.
TEST_CASE("newton launch: the fused forward's instructions, against the H200's times") {
    const DeviceLimits h200 = preset("h200");
    struct Measured {
        newton::Cell cell;
        DType dtype;
        std::int64_t steps;
        int iterations;
        double milliseconds;
    };
    for (const Measured& m : {Measured{newton::Cell::flash_gru, DType::fp32, 8192, 3, 2.537},
                              Measured{newton::Cell::flash_gru, DType::bf16, 8192, 3, 2.404},
                              Measured{newton::Cell::flash_gru, DType::bf16, 8192, 2, 1.786},
                              Measured{newton::Cell::flash_lstm, DType::fp32, 2048, 3, 1.101},
                              Measured{newton::Cell::flash_lstm, DType::fp32, 8192, 3, 4.356},
                              Measured{newton::Cell::flash_lstm, DType::bf16, 8192, 3, 4.156},
                              Measured{newton::Cell::flash_lstm, DType::bf16, 8192, 2, 3.035}}) {
        CAPTURE(newton::to_string(m.cell));
        CAPTURE(to_string(m.dtype));
        CAPTURE(m.iterations);
        const newton::Problem problem{m.cell, m.dtype, {.time_steps = m.steps, .batch = 32, .units = 2048}};
        newton::Options options;
        options.max_iterations = m.iterations;
        const newton::CostEstimate cost = newton::estimate_cost(h200, problem, options);
        CHECK(cost.fused_seconds * 1e3 == doctest::Approx(m.milliseconds).epsilon(0.1));
        CHECK(cost.fused_forward.issue_seconds > cost.fused_forward.bytes / cost.bandwidth);
        DeviceLimits unknown_clock = h200;
        unknown_clock.sm_clock = 0;
        CHECK(newton::estimate_cost(unknown_clock, problem, options).fused_forward.issue_seconds == 0);
    }
}

TEST_CASE(
    "newton launch: automatic picks Newton where the H100 measured it 2-2.8x faster (B = 1, 2048 units)") {
    // newton_bench's grid (docs/benchmarks.md): at B = 1, 2048 units Newton forward took 0.06-17.9 ms
    // against 0.13-47.4 ms sequential, every T and both cells; the first latency guesses picked
    // sequential there. (At B = 32 x 2048 units the fused kernel is now the choice: test_newton_backend.cpp.)
    const DeviceLimits h100 = preset("h100");
    for (newton::Cell cell : {newton::Cell::flash_gru, newton::Cell::flash_lstm})
        for (DType dtype : {DType::fp32, DType::bf16})
            for (std::int64_t T : {256, 1024, 4096, 16384, 65536}) {
                CAPTURE(T);
                // A Newton backend (the fused kernel where it applies, docs/benchmarks.md).
                const newton::Problem narrow{cell, dtype, {.time_steps = T, .batch = 1, .units = 2048}};
                CHECK(newton::choose_backend(h100, narrow, {}) != newton::Backend::sequential);
            }
}

// The sequential forward's estimate where many sequences run (H200, 2026-12-03, newton_bench, the
// shared-memory tiles of sequential_tiles.hpp with the cheap copies): fp32 tiles of 25344 bytes (+ 1 KiB
// the driver keeps) leave 8 warps per SM, so 65536 sequences are 2 waves and 262144 are 8, each wave a
// chain of T steps; bf16 tiles of 13056 bytes leave 16, one wave at 65536. Where many sequences run the
// measured rate (the issue term, fitted at B 512 x 2048 units) bounds them, not the chain. Every
// estimate within 15% of the measured time.
TEST_CASE("newton launch: the sequential forward's waves and rate against the H200's times") {
    const DeviceLimits h200 = preset("h200");
    struct Measured {
        newton::Cell cell;
        DType dtype;
        std::int64_t batch, steps;
        double waves, milliseconds;
    };
    for (const Measured& m : {Measured{newton::Cell::flash_gru, DType::fp32, 32, 2048, 2, 0.6961},
                              Measured{newton::Cell::flash_gru, DType::fp32, 128, 1024, 8, 1.360},
                              Measured{newton::Cell::flash_lstm, DType::fp32, 32, 2048, 2, 0.8933},
                              Measured{newton::Cell::flash_lstm, DType::fp32, 128, 1024, 8, 1.740},
                              Measured{newton::Cell::flash_gru, DType::bf16, 32, 512, 1, 0.1697},
                              Measured{newton::Cell::flash_lstm, DType::bf16, 32, 512, 1, 0.2168}}) {
        CAPTURE(newton::to_string(m.cell));
        CAPTURE(to_string(m.dtype));
        CAPTURE(m.batch);
        const newton::Problem problem{
            m.cell, m.dtype, {.time_steps = m.steps, .batch = m.batch, .units = 2048}};
        const newton::Problem one{m.cell, m.dtype, {.time_steps = m.steps, .batch = 1, .units = 256}};
        const newton::CostEstimate cost = newton::estimate_cost(h200, problem, {});
        const double step = newton::estimate_cost(h200, one, {}).sequential_forward.latency_seconds;
        CHECK(cost.sequential_forward.latency_seconds == doctest::Approx(m.waves * step));
        CHECK(cost.sequential_seconds * 1e3 == doctest::Approx(m.milliseconds).epsilon(0.15));
    }
}

// The Newton family's backend choice (newton/passes.hpp), host-only: names, the forced backends, and
// the cost model's choice at the corners the issue names (estimates, to be replaced by measurements).
#include <doctest/doctest.h>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"

using namespace flashrnn;

TEST_CASE("newton backend: names and forced choices") {
    for (newton::Backend b : {newton::Backend::automatic, newton::Backend::newton,
                              newton::Backend::sequential, newton::Backend::fused})
        CHECK(newton::parse_backend(newton::to_string(b)) == b);
    CHECK_THROWS_WITH_AS(newton::parse_backend("fast"),
                         "flashrnn::newton: unknown backend 'fast' (automatic, newton, sequential or fused)",
                         UnsupportedError);
    const DeviceLimits h100 = preset("h100");
    const newton::Problem problem{
        newton::Cell::flash_gru, DType::fp32, {.time_steps = 512, .batch = 32, .units = 2048}};
    for (newton::Backend b : {newton::Backend::newton, newton::Backend::sequential, newton::Backend::fused}) {
        newton::Options options;
        options.backend = b;
        CHECK(newton::choose_backend(h100, problem, options) == b);
        CHECK(newton::choose_backward_backend(h100, problem, options) == b);
    }
    // Each backend's passes, as the choices read them; automatic has none of its own.
    const newton::CostEstimate cost = newton::estimate_cost(h100, problem, {});
    CHECK(&cost.forward(newton::Backend::fused) == &cost.fused_forward);
    CHECK(&cost.forward(newton::Backend::newton) == &cost.newton_forward);
    CHECK(&cost.forward(newton::Backend::sequential) == &cost.sequential_forward);
    CHECK(&cost.backward(newton::Backend::fused) == &cost.fused_backward);
    CHECK(&cost.backward(newton::Backend::newton) == &cost.newton_backward);
    CHECK(&cost.backward(newton::Backend::sequential) == &cost.sequential_backward);
    CHECK_THROWS_AS(cost.forward(newton::Backend::automatic), UnsupportedError);
    CHECK_THROWS_AS(cost.backward(newton::Backend::automatic), UnsupportedError);
}

// newton_bench (docs/benchmarks.md, "Newton parallel RNNs"): at B = 1 x 256 units, T = 65536 the fused
// forward is the fastest by far (H100 and H200: 4-9x the unfused Newton, 25-60x the sequential kernel);
// at B = 32 x 2048 FlashGRU fp32 is bound by its bytes in both the fused and the sequential kernel (a
// tie, which goes to the fused one). The other B = 32 x 2048 shapes are in the H200's measured grid
// (test_newton_measured_grid.cpp): since the sequential kernels' cheap copies (2026-12-03) FlashLSTM's
// sequential forward is the faster there.
TEST_CASE(
    "newton backend: the cost model picks the fused kernel at the issue's shapes, with a tolerance too") {
    const DeviceLimits h100 = preset("h100");
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            CAPTURE(newton::to_string(cell));
            CAPTURE(to_string(dtype));
            const newton::Problem narrow{cell, dtype, {.time_steps = 65536, .batch = 1, .units = 256}};
            CHECK(newton::choose_backend(h100, narrow, {}) == newton::Backend::fused);
            if (cell == newton::Cell::flash_gru && dtype == DType::fp32)
                for (std::int64_t T : {512, 2048, 8192}) {
                    const newton::Problem wide{cell, dtype, {.time_steps = T, .batch = 32, .units = 2048}};
                    CHECK(newton::choose_backend(h100, wide, {}) == newton::Backend::fused);
                }
            const newton::CostEstimate cost = newton::estimate_cost(h100, narrow, {});
            CHECK(cost.newton_seconds > 0);
            // Measured at this shape (H200, 2026-12-03): the unfused Newton 1.34-2.32 ms, the sequential
            // kernel 5.72-9.53 ms (FlashLSTM fp32 the closest: 6.20 against 2.32).
            CHECK(cost.sequential_seconds > 2 * cost.newton_seconds);
            CHECK(cost.newton_seconds > cost.fused_seconds);
            // A tolerance stops the fused kernel's tiles as it stops the unfused solver's sequences: the
            // same candidates, the estimate at the iteration limit.
            newton::Options with_tolerance;
            with_tolerance.tolerance = newton::Tolerance{1e-5, 0.0};
            CHECK(newton::choose_backend(h100, narrow, with_tolerance) == newton::Backend::fused);
            CHECK(newton::estimate_cost(h100, narrow, with_tolerance).fused_seconds == cost.fused_seconds);
        }
}

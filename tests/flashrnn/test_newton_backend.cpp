// The Newton family's backend choice (newton/passes.hpp), host-only: names, the forced backends, and
// the cost model's choice at the corners the issue names (estimates, to be replaced by measurements).
#include <doctest/doctest.h>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"

using namespace flashrnn;

TEST_CASE("newton backend: names and forced choices") {
    for (newton::Backend b :
         {newton::Backend::automatic, newton::Backend::newton, newton::Backend::sequential})
        CHECK(newton::parse_backend(newton::to_string(b)) == b);
    CHECK_THROWS_WITH_AS(newton::parse_backend("fused"),
                         "flashrnn::newton: unknown backend 'fused' (automatic, newton or sequential)",
                         UnsupportedError);
    const DeviceLimits h100 = preset("h100");
    const newton::Problem problem{
        newton::Cell::flash_gru, DType::fp32, {.time_steps = 512, .batch = 32, .units = 2048}};
    for (newton::Backend b : {newton::Backend::newton, newton::Backend::sequential}) {
        newton::Options options;
        options.backend = b;
        CHECK(newton::choose_backend(h100, problem, options) == b);
    }
}

TEST_CASE(
    "newton backend: the cost model picks Newton for long sequences of few units, sequential for wide ones") {
    const DeviceLimits h100 = preset("h100");
    for (newton::Cell cell : newton::all_cells) {
        CAPTURE(newton::to_string(cell));
        const newton::Problem narrow{cell, DType::fp32, {.time_steps = 65536, .batch = 1, .units = 256}};
        const newton::Problem wide{cell, DType::fp32, {.time_steps = 512, .batch = 32, .units = 2048}};
        CHECK(newton::choose_backend(h100, narrow, {}) == newton::Backend::newton);
        CHECK(newton::choose_backend(h100, wide, {}) == newton::Backend::sequential);
        const newton::CostEstimate cost = newton::estimate_cost(h100, narrow, {});
        CHECK(cost.newton_seconds > 0);
        CHECK(cost.sequential_seconds > 4 * cost.newton_seconds);
    }
}

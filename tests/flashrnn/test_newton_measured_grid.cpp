// The automatic Newton backend against a measured grid: newton_bench on the H200 (issue 16, 2026-12-02,
// `newton_bench --runs 5`, docs/benchmarks.md "The crossover grid"), forward ms of the unfused Newton,
// the fused and the sequential kernels. On the h200 preset the cost model's choice must be within 10%
// of the fastest measured backend at every point, as the benchmark checks on the device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "flashrnn/newton/passes.hpp"

using namespace flashrnn;

namespace {

struct MeasuredPoint {
    newton::Cell cell;
    DType dtype;
    std::int64_t batch, units, steps;
    double newton_ms, fused_ms, sequential_ms;
};

constexpr MeasuredPoint kH200Grid[] = {
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 512, 2.358, 0.1698, 0.8896},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 2048, 10.08, 0.6487, 3.631},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 8192, 39.05, 2.549, 14.09},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 65536, 1.341, 0.1444, 34.64},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 256, 0.02621, 0.005344, 0.136},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 1024, 0.0399, 0.006976, 0.5525},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 4096, 0.08957, 0.0143, 2.163},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 16384, 0.3443, 0.04042, 8.676},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 256, 0.05715, 0.008352, 0.138},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 1024, 0.1654, 0.0225, 0.542},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 4096, 0.6034, 0.0751, 2.224},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 16384, 2.375, 0.2761, 9.048},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 65536, 9.537, 1.079, 35.62},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 256, 0.3207, 0.0279, 0.1387},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 1024, 1.159, 0.09021, 0.5495},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 4096, 4.803, 0.3383, 2.204},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 16384, 19.15, 1.327, 8.823},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 256, 1.203, 0.09245, 0.5089},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 1024, 4.731, 0.329, 1.943},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 4096, 19.32, 1.281, 7.729},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 512, 2.45, 0.1674, 0.9056},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 2048, 10.04, 0.6159, 3.321},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 8192, 38.28, 2.403, 14.37},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 65536, 1.363, 0.1269, 35.63},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 256, 0.02611, 0.005408, 0.1465},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 1024, 0.04022, 0.006464, 0.569},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 4096, 0.09194, 0.01251, 2.217},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 16384, 0.3524, 0.03578, 8.855},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 256, 0.0591, 0.007872, 0.148},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 1024, 0.1604, 0.01984, 0.5649},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 4096, 0.621, 0.06835, 2.23},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 16384, 2.361, 0.2465, 8.901},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 65536, 9.518, 0.9572, 35.6},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 256, 0.33, 0.02797, 0.1482},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 1024, 1.179, 0.08605, 0.6222},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 4096, 4.842, 0.3188, 2.343},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 16384, 19.15, 1.247, 8.96},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 256, 1.221, 0.09296, 0.4698},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 1024, 4.729, 0.3183, 1.656},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 4096, 19.36, 1.21, 6.56},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 512, 3.903, 0.2869, 1.917},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 2048, 15.66, 1.101, 7.705},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 8192, 60.7, 4.354, 34.01},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 65536, 2.352, 0.2766, 39.21},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 256, 0.0312, 0.006208, 0.1587},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 1024, 0.05104, 0.009888, 0.6064},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 4096, 0.1323, 0.02253, 2.551},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 16384, 0.6038, 0.07402, 10.08},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 256, 0.07171, 0.01062, 0.1616},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 1024, 0.278, 0.03824, 0.6176},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 4096, 0.9404, 0.1403, 2.467},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 16384, 3.75, 0.5353, 10.06},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 65536, 15.2, 2.111, 39.36},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 256, 0.5064, 0.04368, 0.1873},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 1024, 1.985, 0.1482, 0.6803},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 4096, 7.611, 0.5701, 2.734},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 16384, 30.32, 2.25, 11.06},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 256, 1.925, 0.1532, 0.9708},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 1024, 8.085, 0.5587, 4.05},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 4096, 30.61, 2.185, 16.32},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 512, 3.884, 0.2821, 1.543},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 2048, 15.37, 1.057, 6.092},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 8192, 59.2, 4.155, 25.14},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 65536, 2.292, 0.255, 45.04},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 256, 0.03354, 0.005856, 0.1833},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 1024, 0.05101, 0.009152, 0.718},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 4096, 0.1324, 0.02032, 2.846},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 16384, 0.6016, 0.06739, 11.27},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 256, 0.0727, 0.0096, 0.1849},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 1024, 0.2805, 0.03674, 0.7102},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 4096, 0.9384, 0.1315, 2.854},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 16384, 3.654, 0.4985, 11.36},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 65536, 14.66, 1.963, 45.26},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 256, 0.5005, 0.04301, 0.1847},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 1024, 1.964, 0.1428, 0.7835},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 4096, 7.393, 0.5439, 2.956},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 16384, 29.13, 2.143, 11.37},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 256, 1.765, 0.1516, 0.8086},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 1024, 7.972, 0.54, 2.99},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 4096, 29.97, 2.093, 12.04},
};

double measured_ms(const MeasuredPoint& point, newton::Backend backend) {
    switch (backend) {
    case newton::Backend::newton:
        return point.newton_ms;
    case newton::Backend::fused:
        return point.fused_ms;
    default:
        return point.sequential_ms;
    }
}

} // namespace

TEST_CASE("newton backend: the automatic choice on the H200's measured grid is within 10% of the fastest") {
    const DeviceLimits h200 = preset("h200");
    for (const MeasuredPoint& point : kH200Grid) {
        CAPTURE(newton::to_string(point.cell));
        CAPTURE(to_string(point.dtype));
        CAPTURE(point.batch);
        CAPTURE(point.units);
        CAPTURE(point.steps);
        const newton::Problem problem{
            point.cell, point.dtype, {.time_steps = point.steps, .batch = point.batch, .units = point.units}};
        const newton::Backend choice = newton::choose_backend(h200, problem, {});
        const double fastest = std::min({point.newton_ms, point.fused_ms, point.sequential_ms});
        CAPTURE(newton::to_string(choice));
        CHECK(measured_ms(point, choice) <= 1.1 * fastest);
    }
}

// The automatic Newton backends against a measured grid: newton_bench on the H200 (issue 16, 2026-12-03,
// `newton_bench --runs 5`, with passes.cu flushing subnormals, docs/benchmarks.md "The sequential
// kernels' copies and activations"), ms of
// the unfused Newton, the fused and the sequential kernels, forward and backward (the rows printed by
// examples/bench/newton_measured_grid.py from the CSV). On the h200 preset the cost model's choice for
// each pass must be within 10% of the fastest measured backend at every point.
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
    double newton_ms, fused_ms, sequential_ms;                            // forward
    double newton_backward_ms, fused_backward_ms, sequential_backward_ms; // forward+backward less forward
};

constexpr MeasuredPoint kH200Grid[] = {
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 512, 2.35, 0.1701, 0.1708, 0.8125, 0.3469, 0.6259},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 2048, 10.08, 0.6478, 0.6736, 3.73, 1.323, 2.504},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 8192, 38.3, 2.55, 2.704, 18.5, 5.215, 10.01},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 65536, 1.344, 0.1441, 5.693, 1.093, 0.2257, 17.93},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 256, 0.02605, 0.005376, 0.02637, 0.01158, 0.01005,
     0.06483},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 1024, 0.04067, 0.007136, 0.0928, 0.01792, 0.008224,
     0.2282},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 4096, 0.08954, 0.01414, 0.3587, 0.03936, 0.0184, 0.9746},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 16384, 0.3444, 0.03987, 1.423, 0.2092, 0.05987, 4.223},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 256, 0.05757, 0.008384, 0.02678, 0.02115, 0.01213,
     0.06826},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 1024, 0.1659, 0.02262, 0.09312, 0.06906, 0.03187, 0.2789},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 4096, 0.6041, 0.07546, 0.3591, 0.2669, 0.1214, 1.158},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 16384, 2.38, 0.2761, 1.425, 1.444, 0.4248, 4.808},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 65536, 9.762, 1.078, 5.72, 8.196, 1.64, 18.9},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 256, 0.3216, 0.02787, 0.03286, 0.1142, 0.05274, 0.09341},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 1024, 1.16, 0.09056, 0.1117, 0.4498, 0.1826, 0.3681},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 4096, 4.895, 0.336, 0.4103, 2.013, 0.6986, 1.467},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 16384, 19.66, 1.338, 1.627, 11.64, 2.753, 5.85},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 256, 1.203, 0.0927, 0.08829, 0.3551, 0.1791, 0.3107},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 1024, 4.733, 0.3292, 0.3353, 1.759, 0.6775, 1.246},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 4096, 19.79, 1.284, 1.352, 8.071, 2.616, 5.024},
    {newton::Cell::flash_gru, DType::fp32, 128, 2048, 256, 4.734, 0.3463, 0.3217, 1.567, 0.6849, 1.162},
    {newton::Cell::flash_gru, DType::fp32, 128, 2048, 1024, 19.48, 1.284, 1.306, 6.947, 2.634, 4.806},
    {newton::Cell::flash_gru, DType::fp32, 512, 2048, 256, 19.45, 1.373, 1.246, 6.289, 2.702, 4.503},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 512, 2.456, 0.167, 0.1635, 0.8208, 0.3166, 0.4893},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 2048, 10.06, 0.6149, 0.6374, 4.095, 1.22, 2.029},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 8192, 38.96, 2.411, 2.529, 20.17, 4.816, 8.184},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 65536, 1.364, 0.1273, 7.758, 1.013, 0.1945, 10.98},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 256, 0.02778, 0.005376, 0.03325, 0.0113, 0.00944, 0.04746},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 1024, 0.04157, 0.006432, 0.1297, 0.01808, 0.007968,
     0.1632},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 4096, 0.09024, 0.01232, 0.4639, 0.04237, 0.0161, 0.6172},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 16384, 0.3518, 0.0352, 1.866, 0.2175, 0.05152, 2.596},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 256, 0.05866, 0.007872, 0.03488, 0.02243, 0.01149,
     0.04858},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 1024, 0.1604, 0.01987, 0.1232, 0.06771, 0.02886, 0.1683},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 4096, 0.6215, 0.06848, 0.4784, 0.2913, 0.1053, 0.6953},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 16384, 2.365, 0.2465, 2.019, 1.521, 0.3671, 2.863},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 65536, 9.655, 0.9574, 7.432, 8.162, 1.419, 11.1},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 256, 0.3296, 0.02758, 0.04285, 0.1102, 0.04838, 0.06054},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 1024, 1.18, 0.08586, 0.1582, 0.4857, 0.1693, 0.2312},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 4096, 4.849, 0.3179, 0.645, 2.228, 0.6499, 0.9942},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 16384, 19.48, 1.248, 2.483, 12.24, 2.572, 3.51},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 256, 1.23, 0.09386, 0.08528, 0.4103, 0.1671, 0.2319},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 1024, 4.79, 0.3182, 0.3212, 1.892, 0.6197, 1.023},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 4096, 19.42, 1.21, 1.267, 8.927, 2.418, 4.091},
    {newton::Cell::flash_gru, DType::bf16, 128, 2048, 256, 4.747, 0.3543, 0.3052, 1.804, 0.6428, 0.8996},
    {newton::Cell::flash_gru, DType::bf16, 128, 2048, 1024, 19.14, 1.246, 1.23, 7.493, 2.422, 3.932},
    {newton::Cell::flash_gru, DType::bf16, 512, 2048, 256, 19.2, 1.4, 1.173, 7.237, 2.545, 3.557},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 512, 3.779, 0.2867, 0.2182, 1.454, 0.6313, 0.8733},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 2048, 14.89, 1.101, 0.8696, 6.135, 2.349, 3.457},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 8192, 57.76, 4.354, 3.506, 28.21, 9.337, 13.91},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 65536, 2.284, 0.2763, 6.199, 1.364, 0.3767, 22.15},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 256, 0.03277, 0.006048, 0.0288, 0.01344, 0.01219,
     0.08794},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 1024, 0.05075, 0.009792, 0.1013, 0.0209, 0.01018, 0.3004},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 4096, 0.1311, 0.02237, 0.3916, 0.06227, 0.02723, 1.229},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 16384, 0.5858, 0.07331, 1.553, 0.3124, 0.1, 5.245},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 256, 0.07133, 0.01046, 0.02918, 0.02896, 0.01542,
     0.09542},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 1024, 0.2693, 0.03795, 0.1018, 0.1131, 0.05661, 0.3775},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 4096, 0.9077, 0.1399, 0.3924, 0.4139, 0.1935, 1.533},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 16384, 3.628, 0.5354, 1.558, 2.016, 0.7306, 6.409},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 65536, 14.7, 2.115, 6.22, 10.02, 2.858, 25.57},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 256, 0.4871, 0.04378, 0.03712, 0.1519, 0.08672, 0.1235},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 1024, 1.922, 0.1486, 0.1313, 0.7778, 0.3193, 0.4596},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 4096, 7.388, 0.5701, 0.4815, 3.179, 1.219, 1.816},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 16384, 28.85, 2.253, 1.892, 15.94, 4.836, 7.214},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 256, 1.867, 0.1527, 0.1083, 0.5456, 0.3132, 0.4396},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 1024, 7.841, 0.5585, 0.4331, 3.091, 1.208, 1.736},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 4096, 29.69, 2.185, 1.757, 12.86, 4.687, 6.951},
    {newton::Cell::flash_lstm, DType::fp32, 128, 2048, 256, 7.012, 0.5906, 0.4084, 2.612, 1.214, 1.508},
    {newton::Cell::flash_lstm, DType::fp32, 128, 2048, 1024, 31.6, 2.199, 1.694, 12.3, 4.722, 6.013},
    {newton::Cell::flash_lstm, DType::fp32, 512, 2048, 256, 28.74, 2.331, 1.595, 10.38, 4.817, 5.904},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 512, 3.832, 0.2818, 0.2063, 1.308, 0.6388, 0.7989},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 2048, 14.51, 1.056, 0.8183, 6.046, 2.494, 3.267},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 8192, 56.68, 4.157, 3.279, 28.02, 9.883, 13.05},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 65536, 2.219, 0.2545, 9.496, 1.278, 0.3933, 18.15},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 256, 0.03293, 0.006144, 0.04218, 0.01482, 0.01133,
     0.07866},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 1024, 0.04995, 0.009248, 0.1612, 0.02205, 0.01075,
     0.2763},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 4096, 0.1292, 0.02035, 0.594, 0.06102, 0.02755, 1.064},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 16384, 0.5827, 0.06704, 2.311, 0.312, 0.1016, 4.421},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 256, 0.07181, 0.009728, 0.04291, 0.02918, 0.01517,
     0.08486},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 1024, 0.269, 0.03635, 0.1548, 0.1111, 0.05254, 0.3011},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 4096, 0.9002, 0.1312, 0.6037, 0.4156, 0.2082, 1.26},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 16384, 3.487, 0.4987, 2.516, 1.983, 0.7767, 5.085},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 65536, 13.95, 1.963, 9.538, 9.682, 3.07, 19.73},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 256, 0.4823, 0.04246, 0.05142, 0.1554, 0.08637, 0.1011},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 1024, 1.87, 0.1427, 0.1937, 0.7709, 0.329, 0.3742},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 4096, 7.116, 0.547, 0.8037, 3.184, 1.287, 1.499},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 16384, 28.29, 2.145, 3.069, 15.62, 5.107, 5.825},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 256, 1.787, 0.1523, 0.1037, 0.5796, 0.3198, 0.3965},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 1024, 7.612, 0.5398, 0.4111, 3.05, 1.265, 1.611},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 4096, 28.68, 2.092, 1.641, 12.76, 4.956, 6.46},
    {newton::Cell::flash_lstm, DType::bf16, 128, 2048, 256, 6.872, 0.5874, 0.3936, 2.616, 1.26, 1.41},
    {newton::Cell::flash_lstm, DType::bf16, 128, 2048, 1024, 30.64, 2.127, 1.595, 12.11, 5.017, 5.942},
    {newton::Cell::flash_lstm, DType::bf16, 512, 2048, 256, 27.54, 2.334, 1.507, 10.44, 4.969, 5.564},
};

// A pass's measured ms of a backend: the point's forward or backward times.
struct PassTimes {
    double newton_ms, fused_ms, sequential_ms;
    double of(newton::Backend backend) const {
        return backend == newton::Backend::newton  ? newton_ms
               : backend == newton::Backend::fused ? fused_ms
                                                   : sequential_ms;
    }
};

// At every point of the grid the pass's automatic choice on the h200 preset takes at most 1.1x the
// fastest measured backend's time.
template <class Choose, class Times> void check_choices(Choose choose, Times times) {
    const DeviceLimits h200 = preset("h200");
    for (const MeasuredPoint& point : kH200Grid) {
        CAPTURE(newton::to_string(point.cell));
        CAPTURE(to_string(point.dtype));
        CAPTURE(point.batch);
        CAPTURE(point.units);
        CAPTURE(point.steps);
        const newton::Problem problem{
            point.cell, point.dtype, {.time_steps = point.steps, .batch = point.batch, .units = point.units}};
        const newton::Backend choice = choose(h200, problem, newton::Options{});
        const PassTimes ms = times(point);
        CAPTURE(newton::to_string(choice));
        CHECK(ms.of(choice) <= 1.1 * std::min({ms.newton_ms, ms.fused_ms, ms.sequential_ms}));
    }
}

} // namespace

TEST_CASE("newton backend: the automatic choice on the H200's measured grid is within 10% of the fastest") {
    check_choices(newton::choose_backend, [](const MeasuredPoint& p) {
        return PassTimes{p.newton_ms, p.fused_ms, p.sequential_ms};
    });
}

TEST_CASE("newton backend: the automatic backward on the H200's measured grid is within 10% of the fastest") {
    check_choices(newton::choose_backward_backend, [](const MeasuredPoint& p) {
        return PassTimes{p.newton_backward_ms, p.fused_backward_ms, p.sequential_backward_ms};
    });
}

// The automatic Newton backends against a measured grid: newton_bench on the H200 (issue 16, 2026-12-03,
// `newton_bench --runs 5`, docs/benchmarks.md "The sequential kernels' copies and activations"), ms of
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
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 512, 2.354, 0.1709, 0.1803, 0.8502, 0.3475, 0.6253},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 2048, 10.04, 0.6524, 0.6961, 3.969, 1.312, 2.5},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 8192, 38.91, 2.549, 2.778, 19.93, 5.193, 10.04},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 65536, 1.348, 0.145, 7.251, 1.095, 0.223, 18.2},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 256, 0.02611, 0.00544, 0.03206, 0.01242, 0.00992, 0.06598},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 1024, 0.04131, 0.007104, 0.1159, 0.01821, 0.008576,
     0.2317},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 4096, 0.09053, 0.01405, 0.4517, 0.04211, 0.01837, 0.9699},
    {newton::Cell::flash_gru, DType::fp32, 1, 256, 16384, 0.3468, 0.04019, 1.795, 0.215, 0.06019, 4.309},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 256, 0.05709, 0.008448, 0.03248, 0.02426, 0.01219,
     0.07021},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 1024, 0.1668, 0.02256, 0.1167, 0.07104, 0.03261, 0.2761},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 4096, 0.6036, 0.07501, 0.4552, 0.2846, 0.1218, 1.163},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 16384, 2.354, 0.2764, 1.808, 1.517, 0.4213, 4.956},
    {newton::Cell::flash_gru, DType::fp32, 1, 2048, 65536, 9.752, 1.078, 7.22, 8.218, 1.632, 19.03},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 256, 0.3211, 0.02794, 0.0383, 0.122, 0.05363, 0.09386},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 1024, 1.159, 0.09066, 0.1356, 0.4789, 0.1828, 0.3686},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 4096, 4.876, 0.3362, 0.5231, 2.161, 0.6965, 1.46},
    {newton::Cell::flash_gru, DType::fp32, 8, 2048, 16384, 19.62, 1.329, 2.024, 12.2, 2.74, 5.85},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 256, 1.201, 0.092, 0.09443, 0.3765, 0.1792, 0.3096},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 1024, 4.716, 0.3295, 0.3498, 1.894, 0.6717, 1.239},
    {newton::Cell::flash_gru, DType::fp32, 32, 2048, 4096, 19.75, 1.283, 1.383, 8.67, 2.602, 5.02},
    {newton::Cell::flash_gru, DType::fp32, 128, 2048, 256, 4.79, 0.3461, 0.3388, 1.654, 0.684, 1.167},
    {newton::Cell::flash_gru, DType::fp32, 128, 2048, 1024, 19.08, 1.282, 1.36, 7.468, 2.622, 4.795},
    {newton::Cell::flash_gru, DType::fp32, 512, 2048, 256, 19.46, 1.369, 1.31, 6.613, 2.694, 4.508},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 512, 2.445, 0.1672, 0.1697, 0.8009, 0.3174, 0.4968},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 2048, 9.979, 0.6156, 0.6476, 4.009, 1.215, 2.059},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 8192, 38.65, 2.404, 2.582, 19.94, 4.802, 8.308},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 65536, 1.361, 0.1265, 9.031, 1.007, 0.1914, 11.41},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 256, 0.02806, 0.005344, 0.03872, 0.01254, 0.01027,
     0.04957},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 1024, 0.04326, 0.006432, 0.1486, 0.01686, 0.007712,
     0.1752},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 4096, 0.09117, 0.01242, 0.5465, 0.04253, 0.01616, 0.662},
    {newton::Cell::flash_gru, DType::bf16, 1, 256, 16384, 0.3502, 0.03523, 2.204, 0.216, 0.05149, 2.734},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 256, 0.05904, 0.007904, 0.04064, 0.02374, 0.01178,
     0.05158},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 1024, 0.161, 0.01984, 0.1452, 0.06755, 0.02906, 0.1861},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 4096, 0.6182, 0.06832, 0.5974, 0.2858, 0.105, 0.7624},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 16384, 2.351, 0.2465, 2.328, 1.514, 0.3662, 3.147},
    {newton::Cell::flash_gru, DType::bf16, 1, 2048, 65536, 9.582, 0.9578, 8.837, 8.055, 1.411, 12.06},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 256, 0.3276, 0.02752, 0.04752, 0.1089, 0.04755, 0.06602},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 1024, 1.173, 0.08557, 0.1801, 0.4787, 0.1702, 0.2391},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 4096, 4.766, 0.318, 0.6932, 2.181, 0.6493, 0.9699},
    {newton::Cell::flash_gru, DType::bf16, 8, 2048, 16384, 19.35, 1.249, 2.77, 12.13, 2.563, 3.662},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 256, 1.214, 0.09274, 0.08771, 0.4102, 0.1676, 0.237},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 1024, 4.695, 0.3182, 0.3297, 1.856, 0.6178, 1.029},
    {newton::Cell::flash_gru, DType::bf16, 32, 2048, 4096, 19.48, 1.211, 1.292, 8.798, 2.412, 4.144},
    {newton::Cell::flash_gru, DType::bf16, 128, 2048, 256, 4.677, 0.3549, 0.3151, 1.78, 0.6414, 0.9136},
    {newton::Cell::flash_gru, DType::bf16, 128, 2048, 1024, 19.21, 1.246, 1.25, 7.383, 2.415, 3.99},
    {newton::Cell::flash_gru, DType::bf16, 512, 2048, 256, 19.08, 1.4, 1.207, 7.106, 2.541, 3.623},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 512, 3.884, 0.2866, 0.228, 1.436, 0.6198, 0.8838},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 2048, 15.3, 1.101, 0.8933, 6.059, 2.336, 3.481},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 8192, 60.34, 4.354, 3.569, 28, 9.277, 13.88},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 65536, 2.346, 0.2757, 7.822, 1.406, 0.3773, 22.2},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 256, 0.03443, 0.006016, 0.03507, 0.01379, 0.01347,
     0.0919},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 1024, 0.05242, 0.01037, 0.127, 0.02144, 0.01053, 0.3131},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 4096, 0.133, 0.02243, 0.4946, 0.06346, 0.02688, 1.231},
    {newton::Cell::flash_lstm, DType::fp32, 1, 256, 16384, 0.6013, 0.07363, 1.965, 0.314, 0.09994, 5.379},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 256, 0.07213, 0.01053, 0.03533, 0.03021, 0.01536,
     0.09933},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 1024, 0.2751, 0.03782, 0.1273, 0.1122, 0.0575, 0.3956},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 4096, 0.9349, 0.1404, 0.4962, 0.412, 0.1924, 1.629},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 16384, 3.737, 0.5355, 1.964, 1.985, 0.7276, 6.632},
    {newton::Cell::flash_lstm, DType::fp32, 1, 2048, 65536, 15.1, 2.111, 7.869, 9.907, 2.854, 26.15},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 256, 0.5012, 0.04394, 0.04304, 0.1889, 0.08563, 0.1256},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 1024, 1.954, 0.1487, 0.1518, 0.7728, 0.3199, 0.4646},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 4096, 7.542, 0.5694, 0.5539, 3.157, 1.21, 1.835},
    {newton::Cell::flash_lstm, DType::fp32, 8, 2048, 16384, 29.74, 2.251, 2.043, 15.85, 4.819, 7.341},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 256, 1.918, 0.1528, 0.115, 0.5406, 0.3113, 0.4442},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 1024, 7.928, 0.5588, 0.4444, 3.055, 1.196, 1.735},
    {newton::Cell::flash_lstm, DType::fp32, 32, 2048, 4096, 30.49, 2.186, 1.786, 12.71, 4.654, 6.964},
    {newton::Cell::flash_lstm, DType::fp32, 128, 2048, 256, 7.334, 0.5882, 0.4276, 2.582, 1.209, 1.519},
    {newton::Cell::flash_lstm, DType::fp32, 128, 2048, 1024, 31.88, 2.196, 1.74, 12.14, 4.703, 6.03},
    {newton::Cell::flash_lstm, DType::fp32, 512, 2048, 256, 29.62, 2.331, 1.679, 10.3, 4.791, 5.961},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 512, 3.849, 0.2828, 0.2168, 1.421, 0.6333, 0.8243},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 2048, 15.25, 1.057, 0.8454, 5.954, 2.475, 3.265},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 8192, 58.85, 4.156, 3.387, 27.72, 9.764, 13.2},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 65536, 2.284, 0.2553, 10.85, 1.277, 0.39, 18.89},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 256, 0.0344, 0.0064, 0.04643, 0.0143, 0.01258, 0.08608},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 1024, 0.05219, 0.009088, 0.1822, 0.02102, 0.01104,
     0.2937},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 4096, 0.1314, 0.02038, 0.6723, 0.06157, 0.02771, 1.15},
    {newton::Cell::flash_lstm, DType::bf16, 1, 256, 16384, 0.6022, 0.06746, 2.636, 0.3119, 0.1014, 4.621},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 256, 0.07373, 0.009856, 0.0471, 0.02909, 0.01514,
     0.09245},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 1024, 0.2779, 0.03648, 0.1758, 0.1113, 0.05264, 0.3222},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 4096, 0.9368, 0.1316, 0.7126, 0.4086, 0.2038, 1.324},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 16384, 3.632, 0.499, 2.844, 1.953, 0.769, 5.325},
    {newton::Cell::flash_lstm, DType::bf16, 1, 2048, 65536, 14.62, 1.964, 10.85, 9.581, 3.04, 21.21},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 256, 0.498, 0.04237, 0.05792, 0.1556, 0.08653, 0.107},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 1024, 1.95, 0.1428, 0.2185, 0.759, 0.3259, 0.396},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 4096, 7.391, 0.5434, 0.8582, 3.134, 1.268, 1.553},
    {newton::Cell::flash_lstm, DType::bf16, 8, 2048, 16384, 29.41, 2.144, 3.377, 15.48, 5.053, 6.167},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 256, 1.762, 0.1521, 0.1086, 0.6646, 0.3184, 0.407},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 1024, 7.933, 0.5397, 0.4275, 2.988, 1.257, 1.662},
    {newton::Cell::flash_lstm, DType::bf16, 32, 2048, 4096, 29.74, 2.091, 1.689, 12.59, 4.911, 6.557},
    {newton::Cell::flash_lstm, DType::bf16, 128, 2048, 256, 7.14, 0.5877, 0.4156, 2.58, 1.254, 1.421},
    {newton::Cell::flash_lstm, DType::bf16, 128, 2048, 1024, 31.88, 2.126, 1.653, 11.88, 4.977, 5.955},
    {newton::Cell::flash_lstm, DType::bf16, 512, 2048, 256, 28.66, 2.331, 1.618, 10.28, 4.941, 5.604},
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

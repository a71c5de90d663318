// The Newton solvers (FlashGRU, FlashLSTM; issue 16) against the sequential kernel: forward and
// forward+backward times of newton::forward / newton::backward with backends newton (unfused, 3
// iterations), fused (3 iterations per tile, and the fused backward) and sequential, fp32 and bf16, at the
// issue's shapes (B = 32, 2048 units, T = 512, 2048, 8192; B = 1, 256 units, T = 65536) and a grid of (B,
// units, T) for the crossover, with the automatic backends' picks (forward, backward) and whether each is
// within 10% of the faster.
// Bandwidth is counted on the bytes a forward moves at least: the cell's input projections per element
// (batch row, unit, step) read and its states written, 4 values of the dtype for FlashGRU (3 gates, h) and
// 5 for FlashLSTM (3 gates, h and c; the issue counts 4 for both), as GB/s and as a % of the
// device-to-device copy bandwidth measured in the same run. Timing: CUDA events, warm-up, the median of many
// runs, each call enqueued after an untimed read of twice the L2 (as scan_bench's default). Prints a table
// and writes it as CSV.
//
//   newton_bench [--cells flash_gru,flash_lstm] [--dtypes fp32,bf16] [--runs N] [--no-grid]
//                [--shapes B:D:T,...] [--csv FILE] [--fused-sweep] [--iterations N]
// --iterations: the Newton iterations of the newton and fused backends (default 3, the paper's; fewer
// measure what a 16-bit state, rounded to 2^-8, could save: `flashrnn run --iterations N` checks the error).
// --fused-sweep: only the fused forward and, alone, the fused backward, at every compiled configuration
// (kNewtonFusedDomains) against the model's choice, one line per shape and configuration.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashrnn/newton.hpp"
#include "gpu_bench.hpp"
#include "l2_flush.hpp"

namespace {

using namespace flashrnn;

using bench::cuda_ok;
using Buffer = bench::DeviceBuffer;

// Finite values: 0x3C in every byte is 0.0115 in fp32 and in each bf16 half (the timing does not depend
// on them; Newton's iterations are a fixed number).
void fill(void* data, std::size_t bytes) {
    cuda_ok(cudaMemset(data, 0x3C, bytes), "cudaMemset");
}

std::vector<std::string> split(const std::string& text, char separator = ',') {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, separator);)
        if (!part.empty()) parts.push_back(part);
    return parts;
}

struct Shape3 {
    long long batch, units, steps;
};

// The shapes, then the crossover grid (at most 2^28 elements, to fit the workspaces of fp32
// FlashLSTM's forward and backward together in 80 GB).
std::vector<Shape3> default_shapes(bool grid) {
    std::vector<Shape3> shapes{{32, 2048, 512}, {32, 2048, 2048}, {32, 2048, 8192}, {1, 256, 65536}};
    if (!grid) return shapes;
    for (Shape3 bd : {Shape3{1, 256, 0}, Shape3{1, 2048, 0}, Shape3{8, 2048, 0}, Shape3{32, 2048, 0},
                      Shape3{128, 2048, 0}, Shape3{512, 2048, 0}})
        for (long long steps : {256LL, 1024LL, 4096LL, 16384LL, 65536LL}) {
            const Shape3 s{bd.batch, bd.units, steps};
            const bool named = std::any_of(shapes.begin(), shapes.end(), [&](const Shape3& n) {
                return n.batch == s.batch && n.units == s.units && n.steps == s.steps;
            });
            if (!named && s.batch * s.units * s.steps <= (1LL << 28)) shapes.push_back(s);
        }
    return shapes;
}

// The backends timed, in the columns' order.
constexpr newton::Backend kBackends[] = {newton::Backend::newton, newton::Backend::fused,
                                         newton::Backend::sequential};
constexpr int kBackendCount = 3;

struct Row {
    std::string cell, dtype;
    Shape3 shape;
    double forward_ms[kBackendCount], total_ms[kBackendCount], gbps[kBackendCount];
    std::string automatic, automatic_backward; // the forward's pick, the backward's
    bool automatic_within_10_percent, automatic_backward_within_10_percent;
};

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> cells{"flash_gru", "flash_lstm"}, dtypes{"fp32", "bf16"};
    int runs = 20, iterations = newton::Options{}.max_iterations;
    bool grid = true, fused_sweep = false;
    std::vector<Shape3> shapes;
    std::string csv_path = "newton_bench.csv";
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) throw std::invalid_argument(key + " needs a value");
            return std::string(argv[++i]);
        };
        if (key == "--cells")
            cells = split(value());
        else if (key == "--dtypes")
            dtypes = split(value());
        else if (key == "--runs")
            runs = std::stoi(value());
        else if (key == "--iterations") {
            iterations = std::stoi(value());
            if (iterations < 1) throw std::invalid_argument("--iterations takes a count of at least 1");
        } else if (key == "--no-grid")
            grid = false;
        else if (key == "--fused-sweep")
            fused_sweep = true;
        else if (key == "--shapes") {
            for (const std::string& s : split(value())) {
                const auto parts = split(s, ':');
                if (parts.size() != 3) throw std::invalid_argument("--shapes takes B:D:T,...");
                shapes.push_back({std::stoll(parts[0]), std::stoll(parts[1]), std::stoll(parts[2])});
            }
        } else if (key == "--csv")
            csv_path = value();
        else {
            std::fprintf(stderr, "unknown option %s\n", key.c_str());
            return 2;
        }
    }
    if (shapes.empty()) shapes = default_shapes(grid);
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const bench::L2Flush flush_l2;
    auto time_ms = [&](const std::function<void()>& call) {
        return bench::stream_median_ms(call, runs, [&] { flush_l2(); });
    };

    // The device's copy bandwidth: a device-to-device copy of 1 GiB (read + write).
    double copy_gbps = 0;
    {
        const std::size_t bytes = std::size_t{1} << 30;
        Buffer a(bytes), b(bytes);
        fill(a.data, bytes);
        const double ms = bench::median_ms(
            [&] { cuda_ok(cudaMemcpyAsync(b.data, a.data, bytes, cudaMemcpyDeviceToDevice), "copy"); }, runs);
        copy_gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e6);
    }
    std::printf("device: %s, copy bandwidth %.0f GB/s (cudaMemcpy D2D of 1 GiB), Newton: %d iterations\n",
                prop.name, copy_gbps, iterations);
    std::printf(
        "%-10s %-5s %3s %5s %6s | %9s %9s %9s | %9s %9s %9s | %-10s %-6s | %-10s %-6s | %6s %6s %6s\n",
        "cell", "dtype", "B", "D", "T", "newton", "fused", "seq", "newton+bw", "fused+bw", "seq+bw",
        "automatic", "<=10%", "backward", "<=10%", "N%copy", "F%copy", "S%copy");

    std::vector<Row> table;
    for (const std::string& cell_name : cells)
        for (const std::string& dtype_name : dtypes)
            for (const Shape3& s : shapes) {
                const newton::Cell cell =
                    cell_name == "flash_gru" ? newton::Cell::flash_gru : newton::Cell::flash_lstm;
                const DType dtype = parse_dtype(dtype_name);
                const newton::Problem problem{cell, dtype, {s.steps, s.batch, s.units}};
                const newton::CellInfo info = newton::cell_info(cell);
                const auto inputs_sizes = newton::inputs_shape(info, problem.shape).sizes();
                const auto parameter_sizes = newton::parameters_shape(info, problem.shape).sizes();
                const auto state_sizes = newton::state_shape(info, problem.shape).sizes();
                const auto sequence_sizes = newton::state_sequence_shape(info, problem.shape).sizes();
                const std::size_t e = static_cast<std::size_t>(bytes_of(dtype));
                const auto bytes_of_sizes = [](const Extents& sizes, std::size_t width) {
                    return static_cast<std::size_t>(sizes.product()) * width;
                };
                Buffer inputs(bytes_of_sizes(inputs_sizes, e)),
                    parameters(bytes_of_sizes(parameter_sizes, 4));
                Buffer states(bytes_of_sizes(sequence_sizes, e)), last(bytes_of_sizes(state_sizes, 4));
                Buffer d_states(bytes_of_sizes(sequence_sizes, e)), d_inputs(bytes_of_sizes(inputs_sizes, e));
                Buffer d_parameters(bytes_of_sizes(parameter_sizes, 4)),
                    d_initial(bytes_of_sizes(state_sizes, 4));
                fill(inputs.data, bytes_of_sizes(inputs_sizes, e));
                fill(parameters.data, bytes_of_sizes(parameter_sizes, 4));
                fill(d_states.data, bytes_of_sizes(sequence_sizes, e));
                const double counted = static_cast<double>(s.batch * s.units * s.steps) *
                                       (info.num_gates + info.num_states) * static_cast<double>(e);
                // The fused backward's own traffic: inputs, states and their gradients read, the inputs'
                // gradients written.
                const double backward_counted = static_cast<double>(s.batch * s.units * s.steps) *
                                                (2.0 * info.num_gates + 2.0 * info.num_states) * e;
                if (fused_sweep) {
                    const ScanConfig chosen = newton::fused_config(device_limits_of(0), problem);
                    for (int elements : kNewtonFusedDomains.elements_per_thread)
                        for (int threads : kNewtonFusedDomains.threads_per_block) {
                            newton::Options options;
                            options.max_iterations = iterations;
                            options.backend = newton::Backend::fused;
                            options.fused_config = ScanConfig{elements, threads, ScanAccess::shared};
                            const std::size_t fw_bytes = newton::forward_workspace_bytes(problem, options);
                            Buffer fw(fw_bytes);
                            const newton::ForwardArgs args{{inputs.data, dtype, inputs_sizes},
                                                           {parameters.data, DType::fp32, parameter_sizes},
                                                           {},
                                                           {states.data, dtype, sequence_sizes},
                                                           {last.data, DType::fp32, state_sizes},
                                                           {},
                                                           Workspace{fw.data, fw_bytes}};
                            const double ms =
                                time_ms([&] { newton::forward(problem, args, options, nullptr); });
                            const newton::BackwardArgs backward_args{
                                {inputs.data, dtype, inputs_sizes},
                                {parameters.data, DType::fp32, parameter_sizes},
                                {},
                                {states.data, dtype, sequence_sizes},
                                {d_states.data, dtype, sequence_sizes},
                                {},
                                {d_inputs.data, dtype, inputs_sizes},
                                {d_parameters.data, DType::fp32, parameter_sizes},
                                {d_initial.data, DType::fp32, state_sizes},
                                Workspace{}};
                            const double backward_ms =
                                time_ms([&] { newton::backward(problem, backward_args, options, nullptr); });
                            std::printf("fused sweep %-10s %-5s %3lld %5lld %6lld | %d x %4d | %8.3f ms "
                                        "%5.1f%% copy | backward %8.3f ms %5.1f%% copy%s\n",
                                        cell_name.c_str(), dtype_name.c_str(), s.batch, s.units, s.steps,
                                        elements, threads, ms, 100 * counted / (ms * 1e6) / copy_gbps,
                                        backward_ms, 100 * backward_counted / (backward_ms * 1e6) / copy_gbps,
                                        *options.fused_config == chosen ? "  <- model" : "");
                            std::fflush(stdout);
                        }
                    continue;
                }
                double forward_ms[kBackendCount] = {}, total_ms[kBackendCount] = {};
                int b = 0;
                for (newton::Backend backend : kBackends) {
                    newton::Options options;
                    options.max_iterations = iterations;
                    options.backend = backend;
                    const std::size_t fw_bytes = newton::forward_workspace_bytes(problem, options);
                    const std::size_t bw_bytes = newton::backward_workspace_bytes(problem, options);
                    Buffer fw(fw_bytes), bw(bw_bytes);
                    const newton::ForwardArgs forward_args{{inputs.data, dtype, inputs_sizes},
                                                           {parameters.data, DType::fp32, parameter_sizes},
                                                           {},
                                                           {states.data, dtype, sequence_sizes},
                                                           {last.data, DType::fp32, state_sizes},
                                                           {},
                                                           Workspace{fw.data, fw_bytes}};
                    const newton::BackwardArgs backward_args{
                        {inputs.data, dtype, inputs_sizes},
                        {parameters.data, DType::fp32, parameter_sizes},
                        {},
                        {states.data, dtype, sequence_sizes},
                        {d_states.data, dtype, sequence_sizes},
                        {},
                        {d_inputs.data, dtype, inputs_sizes},
                        {d_parameters.data, DType::fp32, parameter_sizes},
                        {d_initial.data, DType::fp32, state_sizes},
                        Workspace{bw.data, bw_bytes}};
                    forward_ms[b] =
                        time_ms([&] { newton::forward(problem, forward_args, options, nullptr); });
                    total_ms[b] = time_ms([&] {
                        newton::forward(problem, forward_args, options, nullptr);
                        newton::backward(problem, backward_args, options, nullptr);
                    });
                    ++b;
                }
                newton::Options automatic;
                // Each pass's pick against its measured times (the backward's: forward+backward less
                // forward).
                const auto pick_within_10_percent = [&](newton::Backend pick, const double* ms) {
                    const double faster = *std::min_element(ms, ms + kBackendCount);
                    const auto picked_at = std::find(std::begin(kBackends), std::end(kBackends), pick);
                    return ms[picked_at - std::begin(kBackends)] <= 1.1 * faster;
                };
                double backward_ms[kBackendCount];
                for (int k = 0; k < kBackendCount; ++k)
                    backward_ms[k] = total_ms[k] - forward_ms[k];
                const newton::Backend pick = newton::resolve_backend(problem, automatic);
                const newton::Backend backward_pick = newton::resolve_backward_backend(problem, automatic);
                Row row{cell_name,
                        dtype_name,
                        s,
                        {},
                        {},
                        {},
                        std::string(newton::to_string(pick)),
                        std::string(newton::to_string(backward_pick)),
                        pick_within_10_percent(pick, forward_ms),
                        pick_within_10_percent(backward_pick, backward_ms)};
                for (int k = 0; k < kBackendCount; ++k) {
                    row.forward_ms[k] = forward_ms[k];
                    row.total_ms[k] = total_ms[k];
                    row.gbps[k] = counted / (forward_ms[k] * 1e6);
                }
                std::printf(
                    "%-10s %-5s %3lld %5lld %6lld | %9.3f %9.3f %9.3f | %9.3f %9.3f %9.3f | %-10s %-6s | "
                    "%-10s %-6s | %5.1f%% %5.1f%% %5.1f%%\n",
                    row.cell.c_str(), row.dtype.c_str(), s.batch, s.units, s.steps, forward_ms[0],
                    forward_ms[1], forward_ms[2], total_ms[0], total_ms[1], total_ms[2],
                    row.automatic.c_str(), row.automatic_within_10_percent ? "yes" : "NO",
                    row.automatic_backward.c_str(), row.automatic_backward_within_10_percent ? "yes" : "NO",
                    100 * row.gbps[0] / copy_gbps, 100 * row.gbps[1] / copy_gbps,
                    100 * row.gbps[2] / copy_gbps);
                std::fflush(stdout);
                table.push_back(row);
            }

    std::ofstream csv(csv_path);
    csv << "cell,dtype,batch,units,steps";
    for (const char* column : {"forward_ms", "forward_backward_ms", "gbps"})
        for (newton::Backend backend : kBackends)
            csv << ',' << newton::to_string(backend) << '_' << column;
    csv << ",automatic,automatic_within_10_percent,automatic_backward,automatic_backward_within_10_percent,"
           "copy_gbps,iterations\n";
    for (const Row& r : table) {
        csv << r.cell << ',' << r.dtype << ',' << r.shape.batch << ',' << r.shape.units << ','
            << r.shape.steps;
        for (const double* values : {r.forward_ms, r.total_ms, r.gbps})
            for (int k = 0; k < kBackendCount; ++k)
                csv << ',' << values[k];
        csv << ',' << r.automatic << ',' << (r.automatic_within_10_percent ? 1 : 0) << ','
            << r.automatic_backward << ',' << (r.automatic_backward_within_10_percent ? 1 : 0) << ','
            << copy_gbps << ',' << iterations << '\n';
    }
    std::printf("wrote %s\n", csv_path.c_str());
    return 0;
}

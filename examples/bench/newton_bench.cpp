// The Newton solvers (FlashGRU, FlashLSTM; issue 16) against the sequential kernel: forward and
// forward+backward times of newton::forward / newton::backward with backend newton (3 iterations) and
// sequential, fp32 and bf16, at the shapes (B = 32, 2048 units, T = 512, 2048, 8192; B = 1, 256
// units, T = 65536) and a grid of (B, units, T) for the crossover, with the automatic backend's pick and
// whether it is within 10% of the faster. Bandwidth is counted as in the issue: three input values per
// element (batch row, unit, step) read and h written, 4 values of the dtype per element, as GB/s and as
// a % of the device-to-device copy bandwidth measured in the same run. Timing: CUDA events, warm-up,
// the median of many runs, each call enqueued after an untimed read of twice the L2 (as scan_bench's
// default). Prints a table and writes it as CSV.
//
//   newton_bench [--cells flash_gru,flash_lstm] [--dtypes fp32,bf16] [--runs N] [--no-grid]
//                [--shapes B:D:T,...] [--csv FILE]
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
    for (Shape3 bd : {Shape3{1, 256, 0}, Shape3{1, 2048, 0}, Shape3{8, 2048, 0}, Shape3{32, 2048, 0}})
        for (long long steps : {256LL, 1024LL, 4096LL, 16384LL, 65536LL}) {
            const Shape3 s{bd.batch, bd.units, steps};
            const bool named = std::any_of(shapes.begin(), shapes.end(), [&](const Shape3& n) {
                return n.batch == s.batch && n.units == s.units && n.steps == s.steps;
            });
            if (!named && s.batch * s.units * s.steps <= (1LL << 28)) shapes.push_back(s);
        }
    return shapes;
}

struct Row {
    std::string cell, dtype;
    Shape3 shape;
    double newton_forward_ms, sequential_forward_ms, newton_total_ms, sequential_total_ms;
    std::string automatic;
    bool automatic_within_10_percent;
    double newton_gbps, sequential_gbps;
};

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> cells{"flash_gru", "flash_lstm"}, dtypes{"fp32", "bf16"};
    int runs = 20;
    bool grid = true;
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
        else if (key == "--no-grid")
            grid = false;
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
    std::printf("device: %s, copy bandwidth %.0f GB/s (cudaMemcpy D2D of 1 GiB), Newton: 3 iterations\n",
                prop.name, copy_gbps);
    std::printf("%-10s %-5s %3s %5s %6s | %9s %9s %7s | %9s %9s | %-10s %-6s | %7s %6s %7s %6s\n", "cell",
                "dtype", "B", "D", "T", "newton", "seq", "speedup", "newton+bw", "seq+bw", "automatic",
                "<=10%", "N GB/s", "%copy", "S GB/s", "%copy");

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
                double forward_ms[2] = {0, 0}, total_ms[2] = {0, 0};
                int b = 0;
                for (newton::Backend backend : {newton::Backend::newton, newton::Backend::sequential}) {
                    newton::Options options;
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
                const newton::Backend pick = newton::resolve_backend(problem, automatic);
                const double faster = std::min(forward_ms[0], forward_ms[1]);
                const double picked = pick == newton::Backend::newton ? forward_ms[0] : forward_ms[1];
                const double counted = static_cast<double>(s.batch * s.units * s.steps) * 4.0 * e;
                Row row{cell_name,
                        dtype_name,
                        s,
                        forward_ms[0],
                        forward_ms[1],
                        total_ms[0],
                        total_ms[1],
                        std::string(newton::to_string(pick)),
                        picked <= 1.1 * faster,
                        counted / (forward_ms[0] * 1e6),
                        counted / (forward_ms[1] * 1e6)};
                std::printf(
                    "%-10s %-5s %3lld %5lld %6lld | %9.3f %9.3f %6.2fx | %9.3f %9.3f | %-10s %-6s | %7.0f "
                    "%5.1f%% %7.0f %5.1f%%\n",
                    row.cell.c_str(), row.dtype.c_str(), s.batch, s.units, s.steps, row.newton_forward_ms,
                    row.sequential_forward_ms, row.sequential_forward_ms / row.newton_forward_ms,
                    row.newton_total_ms, row.sequential_total_ms, row.automatic.c_str(),
                    row.automatic_within_10_percent ? "yes" : "NO", row.newton_gbps,
                    100 * row.newton_gbps / copy_gbps, row.sequential_gbps,
                    100 * row.sequential_gbps / copy_gbps);
                std::fflush(stdout);
                table.push_back(row);
            }

    std::ofstream csv(csv_path);
    csv << "cell,dtype,batch,units,steps,newton_forward_ms,sequential_forward_ms,newton_forward_backward_ms,"
           "sequential_forward_backward_ms,automatic,automatic_within_10_percent,newton_gbps,sequential_gbps,"
           "copy_gbps\n";
    for (const Row& r : table)
        csv << r.cell << ',' << r.dtype << ',' << r.shape.batch << ',' << r.shape.units << ','
            << r.shape.steps << ',' << r.newton_forward_ms << ',' << r.sequential_forward_ms << ','
            << r.newton_total_ms << ',' << r.sequential_total_ms << ',' << r.automatic << ','
            << (r.automatic_within_10_percent ? 1 : 0) << ',' << r.newton_gbps << ',' << r.sequential_gbps
            << ',' << copy_gbps << '\n';
    std::printf("wrote %s\n", csv_path.c_str());
    return 0;
}

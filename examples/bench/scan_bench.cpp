// Throughput of the scans (linrec forward/backward, fused RG-LRU) on shape (rows, L) with rows =
// 132 x 100 by default, against the device's copy bandwidth. Each tensor read or written counts once:
// linrec forward 3 tensors (x, c -> y), backward 5 (dy, c, y -> dx, dc); RG-LRU forward 4 (x, gate_a,
// gate_x -> h), backward 8 (x, gate_a, gate_x, h, dh -> dx, d_gate_a, d_gate_x). Timing: CUDA events,
// warm-up, median of many runs; by default (--timing stream) the calls are enqueued back to back, each
// after an untimed read of twice the L2's size (so that no run finds its data in L2), and the GPU's
// time of each call is measured (a call's last writes may still sit in L2 when it ends); --timing
// steady times the calls back to back without flushes, all together (a call pays the writes of the one
// before); --timing isolated waits for each call (the time then includes the host's part of the call:
// argument checks, the cached configuration, the launch). Prints a table and writes it as CSV.
//
//   scan_bench [--rows N] [--lengths 16,64,...] [--dtypes fp32,bf16] [--kernels linrec,rglru]
//              [--variants automatic,pipe,ref] [--sweep] [--runs N] [--timing stream|steady|isolated]
//              [--csv FILE]
// --sweep times every compiled linrec configuration and reports the fastest next to the model's choice.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashrnn/scan/linrec.hpp"
#include "flashrnn/scan/rglru.hpp"
#include "flashrnn/tiling/scan_launch.hpp"
#include "gpu_bench.hpp"
#include "l2_flush.hpp"

namespace {

using namespace flashrnn;

using bench::cuda_ok;
using bench::median_ms;
using Buffer = bench::DeviceBuffer;

// Fills a buffer with a constant pattern (the values do not matter for the timing, only that they are
// finite: 0x3C for every byte is 0.0115 in fp32, 1.47 in bf16 halves... all finite, |c| < 1 in fp32).
void fill(void* data, std::size_t bytes) {
    cuda_ok(cudaMemset(data, 0x3C, bytes), "cudaMemset");
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty()) parts.push_back(part);
    return parts;
}

struct Row {
    std::string kernel, dtype, variant, config;
    long long length;
    double ms, gbps, fraction;
};

} // namespace

int main(int argc, char** argv) {
    long long rows = 132 * 100;
    std::vector<long long> lengths{16, 64, 256, 1024, 4096, 16384, 65536};
    std::vector<std::string> dtypes{"fp32", "bf16"}, kernels{"linrec", "rglru"}, variants{"automatic"};
    bool sweep = false;
    int runs = 20;
    std::string timing = "stream";
    std::string csv_path = "scan_bench.csv";
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) throw std::invalid_argument(key + " needs a value");
            return std::string(argv[++i]);
        };
        if (key == "--rows")
            rows = std::stoll(value());
        else if (key == "--lengths") {
            lengths.clear();
            for (const auto& l : split(value()))
                lengths.push_back(std::stoll(l));
        } else if (key == "--dtypes")
            dtypes = split(value());
        else if (key == "--kernels")
            kernels = split(value());
        else if (key == "--variants")
            variants = split(value());
        else if (key == "--sweep")
            sweep = true;
        else if (key == "--runs")
            runs = std::stoi(value());
        else if (key == "--timing") {
            timing = value();
            if (timing != "stream" && timing != "steady" && timing != "isolated") {
                std::fprintf(stderr, "--timing must be stream, steady or isolated, got %s\n", timing.c_str());
                return 2;
            }
        } else if (key == "--csv")
            csv_path = value();
        else {
            std::fprintf(stderr, "unknown option %s\n", key.c_str());
            return 2;
        }
    }
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const long long max_length = *std::max_element(lengths.begin(), lengths.end());
    const std::size_t max_bytes = static_cast<std::size_t>(rows * max_length) * 4;

    // The device's copy bandwidth: a device-to-device copy of the largest tensor (read + write).
    double copy_gbps = 0;
    {
        Buffer a(max_bytes), b(max_bytes);
        fill(a.data, max_bytes);
        const double ms = median_ms(
            [&] { cuda_ok(cudaMemcpyAsync(b.data, a.data, max_bytes, cudaMemcpyDeviceToDevice), "copy"); },
            runs);
        copy_gbps = 2.0 * static_cast<double>(max_bytes) / (ms * 1e6);
    }
    std::printf("device: %s, rows %lld, copy bandwidth %.0f GB/s (cudaMemcpy D2D of %.2f GB), timing %s\n",
                prop.name, rows, copy_gbps, static_cast<double>(max_bytes) / 1e9, timing.c_str());
    const bench::L2Flush flush_l2;
    auto time_ms = [&](const std::function<void()>& call, int n) {
        if (timing == "stream") return bench::stream_median_ms(call, n, [&] { flush_l2(); });
        return timing == "steady" ? bench::steady_ms(call, n) : median_ms(call, n);
    };

    std::vector<Buffer*> buffers;
    for (int t = 0; t < 8; ++t) {
        buffers.push_back(new Buffer(max_bytes));
        fill(buffers.back()->data, max_bytes);
    }
    std::vector<float> lambda_host(100, 0.5f);
    Buffer lambda(4 * 100 + 4), d_lambda(4 * 100 + 4);
    cuda_ok(cudaMemcpy(lambda.data, lambda_host.data(), 400, cudaMemcpyHostToDevice), "cudaMemcpy");

    std::vector<Row> table, swept; // swept: every configuration of --sweep (CSV only)
    std::printf("%-8s %-5s %-10s %8s %10s %9s %6s  %s\n", "kernel", "dtype", "variant", "L", "ms", "GB/s",
                "copy%", "configuration");
    auto record = [&](Row r) {
        std::printf("%-8s %-5s %-10s %8lld %10.4f %9.0f %5.1f%%  %s\n", r.kernel.c_str(), r.dtype.c_str(),
                    r.variant.c_str(), r.length, r.ms, r.gbps, 100 * r.fraction, r.config.c_str());
        std::fflush(stdout);
        table.push_back(std::move(r));
    };
    for (const std::string& dtype_name : dtypes) {
        const DType dtype = parse_dtype(dtype_name);
        const double size = bytes_of(dtype);
        for (long long length : lengths) {
            const ScanShape shape{rows, length};
            const double elements = static_cast<double>(rows) * static_cast<double>(length);
            // Dense [rows, length] views of the buffers.
            auto rows_of = [&](int t) {
                return TensorView{buffers[static_cast<std::size_t>(t)]->data, dtype, {rows, length}};
            };
            auto in = [&](int t) {
                return ConstTensorView{buffers[static_cast<std::size_t>(t)]->data, dtype, {rows, length}};
            };
            auto bench = [&](const std::string& kernel, const std::string& variant, const std::string& config,
                             int tensors, const std::function<void()>& call, int n) {
                const double ms = time_ms(call, n);
                const double gbps = tensors * elements * size / (ms * 1e6);
                record({kernel, dtype_name, variant, config, length, ms, gbps, gbps / copy_gbps});
            };
            if (std::find(kernels.begin(), kernels.end(), "linrec") != kernels.end()) {
                for (bool backward : {false, true}) {
                    const std::string kernel = backward ? "linrec.b" : "linrec.f";
                    const int tensors =
                        tensors_moved(backward ? ScanKernel::linrec_backward : ScanKernel::linrec_forward);
                    const linrec::Problem problem{dtype, shape};
                    const linrec::ForwardArgs forward_args{in(0), in(1), rows_of(2)};
                    const linrec::BackwardArgs backward_args{in(0), in(1), in(2), rows_of(3), rows_of(4)};
                    auto run = [&](const linrec::Options& options) {
                        if (backward)
                            linrec::backward(problem, backward_args, options, nullptr);
                        else
                            linrec::forward(problem, forward_args, options, nullptr);
                    };
                    for (const std::string& variant_name : variants) {
                        const linrec::Variant variant = linrec::parse_variant(variant_name);
                        if (variant == linrec::Variant::ref && length > 4096) continue; // minutes per run
                        if (variant == linrec::Variant::tile && length > 4096) continue;
                        std::string config = variant == linrec::Variant::ref ? "one thread per row" : "";
                        if (variant == linrec::Variant::automatic || variant == linrec::Variant::pipe ||
                            variant == linrec::Variant::tile)
                            config = variant == linrec::Variant::tile
                                         ? "model (tile)"
                                         : describe(linrec::config(problem, backward, true));
                        bench(
                            kernel, variant_name, config, tensors,
                            [&] {
                                run({variant, std::nullopt});
                            },
                            variant == linrec::Variant::ref ? 3 : runs);
                    }
                    if (sweep) {
                        double best_ms = 1e30;
                        ScanConfig best{};
                        for (int e : kLinrecDomains.elements_per_thread)
                            for (int t : kLinrecDomains.threads_per_block)
                                for (ScanAccess a : kLinrecDomains.accesses) {
                                    const ScanConfig c{e, t, a};
                                    const double ms = time_ms(
                                        [&] {
                                            run({linrec::Variant::pipe, c});
                                        },
                                        std::max(5, runs / 4));
                                    if (ms < best_ms) best_ms = ms, best = c;
                                    const double g = tensors * elements * size / (ms * 1e6);
                                    swept.push_back({kernel, dtype_name, "sweep", describe(c), length, ms, g,
                                                     g / copy_gbps});
                                }
                        const double gbps = tensors * elements * size / (best_ms * 1e6);
                        record({kernel, dtype_name, "best", describe(best), length, best_ms, gbps,
                                gbps / copy_gbps});
                    }
                }
            }
            if (std::find(kernels.begin(), kernels.end(), "rglru") != kernels.end() && rows % 100 == 0 &&
                dtype != DType::fp16) {
                const rglru::Problem rproblem{dtype, {rows / 100, 100, length}};
                const ConstTensorView lambda_view{lambda.data, DType::fp32, {100}};
                const rglru::ForwardArgs f{in(0), in(1), in(2), lambda_view, {}, rows_of(3), {}};
                const rglru::BackwardArgs b{
                    in(0), in(1), in(2),      lambda_view, {},         in(3),
                    in(4), {},    rows_of(5), rows_of(6),  rows_of(7), {d_lambda.data, DType::fp32, {100}},
                    {}};
                rglru::Options options;
                const int forward_tensors = tensors_moved(ScanKernel::rglru_forward);
                const int backward_tensors = tensors_moved(ScanKernel::rglru_backward);
                bench(
                    "rglru.f", "fused", "", forward_tensors,
                    [&] { rglru::forward(rproblem, f, options, nullptr); }, runs);
                bench(
                    "rglru.b", "fused", "", backward_tensors,
                    [&] { rglru::backward(rproblem, b, options, nullptr); }, runs);
                bench(
                    "rglru.fb", "fused", "", forward_tensors + backward_tensors,
                    [&] {
                        rglru::forward(rproblem, f, options, nullptr);
                        rglru::backward(rproblem, b, options, nullptr);
                    },
                    runs);
                if (sweep)
                    for (int e : kRglruDomains.elements_per_thread)
                        for (int t : kRglruDomains.threads_per_block)
                            for (ScanAccess a : kRglruDomains.accesses) {
                                const ScanConfig c{e, t, a};
                                options.config = c;
                                for (bool backward : {false, true}) {
                                    const double ms = time_ms(
                                        [&] {
                                            if (backward)
                                                rglru::backward(rproblem, b, options, nullptr);
                                            else
                                                rglru::forward(rproblem, f, options, nullptr);
                                        },
                                        std::max(5, runs / 4));
                                    const double g = (backward ? backward_tensors : forward_tensors) *
                                                     elements * size / (ms * 1e6);
                                    swept.push_back({backward ? "rglru.b" : "rglru.f", dtype_name, "sweep",
                                                     describe(c), length, ms, g, g / copy_gbps});
                                }
                            }
            }
        }
    }
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    for (Buffer* b : buffers)
        delete b;

    std::ofstream csv(csv_path);
    csv << "kernel,dtype,variant,length,rows,ms,gbps,fraction_of_copy,copy_gbps,timing,configuration\n";
    table.insert(table.end(), swept.begin(), swept.end());
    for (const Row& r : table)
        csv << r.kernel << ',' << r.dtype << ',' << r.variant << ',' << r.length << ',' << rows << ',' << r.ms
            << ',' << r.gbps << ',' << r.fraction << ',' << copy_gbps << ',' << timing << ",\"" << r.config
            << "\"\n";
    std::printf("wrote %s\n", csv_path.c_str());
    return 0;
}

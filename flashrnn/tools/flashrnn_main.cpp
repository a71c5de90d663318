// The `flashrnn` command: `tune` shows the configurations the solver picks for a GPU and a problem,
// `run` runs a cell on random data and times it.
#include "flashrnn/flashrnn.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "flashrnn/tiling/scan_launch.hpp"
#include "run_gpu_backend.hpp"
#include "tiling/pointwise_launch.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage = R"(flashrnn - recurrent-network kernels tiled by ConstrINT

usage:
  flashrnn tune --gpu GPU --cell CELL --heads NH --head-dim DH --batch B [--dtype DTYPE] [--backend BACKEND]
      print the launch configuration the solver picks (or why none exists: exit status 1)
  flashrnn tune --kernel SCAN --length L [--gpu GPU] [--dtype DTYPE] [--sequences N] [--aligned yes|no]
      the scan kernels' configuration (SCAN: linrec or rglru; GPU: 'device' when present, else h100_sxm)
  flashrnn tune --kernel newton-gru|newton-lstm --units D --batch B --steps T [--gpu GPU] [--dtype DTYPE]
                [--iterations N]
      the Newton reduction's launch and the cost model's choice between Newton and the sequential kernel
  flashrnn run --cell CELL --heads NH --head-dim DH --batch B --steps T [--backend BACKEND] [--dtype DTYPE]
      run forward and backward on random data and print the time
  flashrnn run --cell NEWTON_CELL --units D --batch B --steps T [--iterations N] [--backend NEWTON_BACKEND]
             [--dtype fp32|bf16]
      reference: the Newton solver against the sequential forward, and the backward, on random data (CPU
      float64; exit status 1 if Newton's states differ from the sequential ones by more than 1e-6);
      newton, sequential or automatic: on the GPU, checked against the float64 references (exit status 1
      if they disagree)

  GPU      a preset (h100_sxm or h100, h200, a100_80gb or a100, a40, rtx3090, l4) or 'device'
  CELL     lstm, gru, slstm or elman
  NEWTON_CELL  flash_gru or flash_lstm (diagonal cells solved by Newton's method over the sequence)
  NEWTON_BACKEND  reference (default), newton, sequential or automatic (the cost model's choice)
  DTYPE    bf16 (default), fp16 or fp32
  BACKEND  tune: alternating (default) or fused; run: reference (default, CPU float64), alternating or
           fused (GPU; checked against the reference on the same inputs, exit status 1 if they disagree)
exit status: 0 done, 1 no configuration fits, 2 bad usage
)";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::map<std::string, std::string> parse_options(int argc, char** argv) {
    std::map<std::string, std::string> options;
    for (int i = 2; i < argc; ++i) {
        const std::string key = argv[i];
        if (key.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + key + "'");
        if (i + 1 >= argc) throw UsageError("option " + key + " needs a value");
        options[key.substr(2)] = argv[++i];
    }
    return options;
}

std::string take(std::map<std::string, std::string>& options, const std::string& key,
                 const char* fallback = nullptr) {
    auto it = options.find(key);
    if (it == options.end()) {
        if (!fallback) throw UsageError("missing --" + key);
        return fallback;
    }
    std::string value = it->second;
    options.erase(it);
    return value;
}

std::int64_t take_positive(std::map<std::string, std::string>& options, const std::string& key) {
    const std::string text = take(options, key);
    std::size_t used = 0;
    long long value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value <= 0)
        throw UsageError("--" + key + " must be a positive integer, got '" + text + "'");
    return value;
}

void no_options_left(const std::map<std::string, std::string>& options) {
    if (!options.empty()) throw UsageError("unknown option --" + options.begin()->first);
}

// `tune --backend fused`: the fused kernels' traits for both passes and the solver's time, or the
// limits that conflict (TilingError: exit status 1).
int tune_fused(const flashrnn::DeviceLimits& limits, flashrnn::Cell cell, std::int64_t heads,
               std::int64_t head_dim, std::int64_t batch, flashrnn::DType dtype) {
    constexpr std::int64_t largest = 1 << 24;
    if (heads > largest || head_dim > largest || batch > largest)
        throw UsageError("--heads, --head-dim and --batch must be at most " + std::to_string(largest));
    for (flashrnn::FusedPass pass : {flashrnn::FusedPass::forward, flashrnn::FusedPass::backward}) {
        flashrnn::FusedTilingRequest request;
        request.pass = pass;
        request.cell = cell;
        request.dtype = dtype;
        request.heads = static_cast<int>(heads);
        request.head_dim = static_cast<int>(head_dim);
        request.batch = static_cast<int>(batch);
        const flashrnn::FusedTilingResult result = flashrnn::choose_fused_tiling(limits, request);
        std::printf("fused %s kernel (solved in %.2f ms, %llu search nodes): %s",
                    std::string(flashrnn::to_string(pass)).c_str(), result.solve_seconds * 1e3,
                    static_cast<unsigned long long>(result.search_nodes),
                    flashrnn::describe(result.traits).c_str());
    }
    return 0;
}

// `tune --kernel linrec|rglru`: the scan launch model's choice for both passes.
int tune_scan(std::map<std::string, std::string> options) {
    const std::string kernel = take(options, "kernel");
    const std::int64_t length = take_positive(options, "length");
    const std::int64_t sequences =
        options.count("sequences") ? take_positive(options, "sequences") : 132 * 100;
    const std::string gpu = take(options, "gpu", flashrnn::cuda_device_available() ? "device" : "h100_sxm");
    const std::string dtype = take(options, "dtype", "bf16");
    const std::string aligned = take(options, "aligned", "yes");
    no_options_left(options);
    if (kernel != "linrec" && kernel != "rglru")
        throw UsageError("unknown scan kernel '" + kernel + "' (linrec, rglru, newton-gru or newton-lstm)");
    if (aligned != "yes" && aligned != "no")
        throw UsageError("--aligned must be yes or no, got '" + aligned + "'");
    const int bytes = flashrnn::bytes_of(flashrnn::parse_dtype(dtype));
    const flashrnn::DeviceLimits limits =
        gpu == "device" ? flashrnn::device_limits_of(0) : flashrnn::preset(gpu);
    std::printf("gpu: %s\n%s, %lld sequences of length %lld, %s, rows %s\n", limits.name.c_str(),
                kernel.c_str(), static_cast<long long>(sequences), static_cast<long long>(length),
                dtype.c_str(), aligned == "yes" ? "aligned to 16 bytes" : "not aligned (no vector access)");
    for (const char* pass : {"forward", "backward"}) {
        const auto scan_kernel = flashrnn::parse_scan_kernel(kernel + "_" + pass);
        const auto start = std::chrono::steady_clock::now();
        const flashrnn::ScanConfig config = flashrnn::choose_scan_config(
            limits, scan_kernel, {sequences, length, bytes, aligned == "yes", false});
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::printf("%s %s: %s (solved in %.2f ms)\n", kernel.c_str(), pass,
                    flashrnn::describe(config).c_str(), ms);
    }
    return 0;
}

void print_pass_cost(const char* what, const flashrnn::newton::PassCost& cost, double bandwidth) {
    std::printf("  %-19s %9.3f ms = max(%.4g GB / %.0f GB/s = %.3f ms, chain %.3f ms) + %d launches x 4 us\n",
                what, cost.seconds * 1e3, cost.bytes / 1e9, bandwidth / 1e9, cost.bytes / bandwidth * 1e3,
                cost.latency_seconds * 1e3, cost.launches);
}

// `tune --kernel newton-gru|newton-lstm`: the reduction's launch (the ConstrINT model) and the cost
// model's estimates of both backends, with the automatic choice.
int tune_newton(std::map<std::string, std::string> options) {
    namespace newton = flashrnn::newton;
    const std::string kernel = take(options, "kernel");
    const newton::Shape shape{.time_steps = take_positive(options, "steps"),
                              .batch = take_positive(options, "batch"),
                              .units = take_positive(options, "units")};
    const std::string gpu = take(options, "gpu", flashrnn::cuda_device_available() ? "device" : "h100_sxm");
    const flashrnn::DType dtype = flashrnn::parse_dtype(take(options, "dtype", "fp32"));
    const std::int64_t iterations = options.count("iterations") ? take_positive(options, "iterations") : 3;
    no_options_left(options);
    if (iterations > 1000) throw UsageError("--iterations must be at most 1000");
    if (dtype != flashrnn::DType::fp32 && dtype != flashrnn::DType::bf16)
        throw UsageError("--dtype must be fp32 or bf16 for the Newton solvers");
    const newton::Cell cell = kernel == "newton-gru" ? newton::Cell::flash_gru : newton::Cell::flash_lstm;
    newton::validate("tune", shape);
    const flashrnn::DeviceLimits limits =
        gpu == "device" ? flashrnn::device_limits_of(0) : flashrnn::preset(gpu);
    const newton::Problem problem{cell, dtype, shape};
    newton::Options solve;
    solve.max_iterations = static_cast<int>(iterations);
    const auto start = std::chrono::steady_clock::now();
    const flashrnn::ReductionLaunch r = newton::solver_reduction_launch(limits, problem);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const newton::CostEstimate cost = newton::estimate_cost(limits, problem, solve);
    std::printf("gpu: %s (%d SMs, %.0f GB/s peak memory bandwidth)\n", limits.name.c_str(), limits.sm_count,
                limits.memory_bandwidth / 1e9);
    std::printf("%s: %s, %lld sequences, %lld Newton iterations\n", kernel.c_str(),
                newton::to_string(problem).c_str(), static_cast<long long>(shape.sequences()),
                static_cast<long long>(iterations));
    std::printf("reduction (%s, fp32 Jacobians and residuals): %s; %lld segments per sequence of "
                "max_sequential_steps %lld tiles (%lld blocks, %d launches, workspace %zu bytes) "
                "(solved in %.2f ms)\n",
                std::string(flashrnn::to_string(newton::reduction_kernel(cell))).c_str(),
                flashrnn::describe(r.config).c_str(), static_cast<long long>(r.segments),
                static_cast<long long>(r.max_sequential_steps),
                static_cast<long long>(r.segments * shape.sequences()), r.launches(), r.workspace_bytes, ms);
    std::printf("cost model (estimates; bandwidth %.0f GB/s assumed, chains of sequential steps and of the "
                "reduction's tiles):\n",
                cost.bandwidth / 1e9);
    print_pass_cost("newton forward", cost.newton_forward, cost.bandwidth);
    print_pass_cost("sequential forward", cost.sequential_forward, cost.bandwidth);
    print_pass_cost("newton backward", cost.newton_backward, cost.bandwidth);
    print_pass_cost("sequential backward", cost.sequential_backward, cost.bandwidth);
    const newton::Backend choice = newton::choose_backend(limits, problem, solve);
    const bool newton_wins = choice == newton::Backend::newton;
    std::printf("automatic: %s (forward estimate %.3f ms against %.3f ms, %.2fx)\n",
                std::string(newton::to_string(choice)).c_str(),
                (newton_wins ? cost.newton_seconds : cost.sequential_seconds) * 1e3,
                (newton_wins ? cost.sequential_seconds : cost.newton_seconds) * 1e3,
                newton_wins ? cost.sequential_seconds / cost.newton_seconds
                            : cost.newton_seconds / cost.sequential_seconds);
    return 0;
}

int tune(std::map<std::string, std::string> options) {
    if (options.count("kernel") && (options["kernel"] == "newton-gru" || options["kernel"] == "newton-lstm"))
        return tune_newton(std::move(options));
    if (options.count("kernel")) return tune_scan(std::move(options));
    const std::string gpu = take(options, "gpu");
    const flashrnn::Cell cell = flashrnn::parse_cell(take(options, "cell"));
    const std::int64_t heads = take_positive(options, "heads"), head_dim = take_positive(options, "head-dim");
    const std::int64_t batch = take_positive(options, "batch");
    const std::string dtype = take(options, "dtype", "bf16");
    const std::string backend = take(options, "backend", "alternating");
    no_options_left(options);
    const int bytes = flashrnn::bytes_of(flashrnn::parse_dtype(dtype));
    if (backend != "alternating" && backend != "fused")
        throw UsageError("unknown backend '" + backend + "' for tune (alternating or fused)");
    const flashrnn::DeviceLimits limits =
        gpu == "device" ? flashrnn::device_limits_of(0) : flashrnn::preset(gpu);
    if (backend == "fused")
        return tune_fused(limits, cell, heads, head_dim, batch, flashrnn::parse_dtype(dtype));
    const auto start = std::chrono::steady_clock::now();
    const flashrnn::PointwiseLaunch launch = flashrnn::choose_pointwise_launch(
        limits, {batch * heads * head_dim, static_cast<int>(head_dim), bytes});
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("gpu: %s\ncell: %s, %lld heads x %lld, batch %lld, %s\n", limits.name.c_str(),
                std::string(flashrnn::cell_info(cell).name).c_str(), static_cast<long long>(heads),
                static_cast<long long>(head_dim), static_cast<long long>(batch), dtype.c_str());
    std::printf("alternating pointwise kernel: %s (solved in %.2f ms)\n", flashrnn::describe(launch).c_str(),
                ms);
    return 0;
}

flashrnn::reference::Tensor random_tensor(std::vector<std::int64_t> shape, std::mt19937_64& rng,
                                          double scale) {
    std::int64_t count = 1;
    for (std::int64_t extent : shape)
        count *= extent;
    std::uniform_real_distribution<double> uniform(-scale, scale);
    flashrnn::reference::Tensor t{std::vector<double>(count), std::move(shape)};
    for (double& v : t.values)
        v = uniform(rng);
    return t;
}

// `run --cell flash_gru|flash_lstm`: the float64 references of the Newton family on random data.
int run_newton(flashrnn::newton::Cell cell, std::map<std::string, std::string> options) {
    namespace newton = flashrnn::newton;
    namespace reference = flashrnn::reference;
    const newton::Shape shape{.time_steps = take_positive(options, "steps"),
                              .batch = take_positive(options, "batch"),
                              .units = take_positive(options, "units")};
    const std::int64_t iterations = options.count("iterations") ? take_positive(options, "iterations") : 3;
    const std::string backend = take(options, "backend", "reference");
    const flashrnn::DType dtype = flashrnn::parse_dtype(take(options, "dtype", "fp32"));
    no_options_left(options);
    if (backend != "reference" && backend != "newton" && backend != "sequential" && backend != "automatic")
        throw UsageError("unknown backend '" + backend + "' for run --cell " +
                         std::string(newton::to_string(cell)) +
                         " (reference, newton, sequential or automatic)");
    if (iterations > 1000) throw UsageError("--iterations must be at most 1000");
    newton::validate("run", shape);
    if (backend != "reference")
        return flashrnn::tools::run_newton_gpu_backend(newton::parse_backend(backend), {cell, dtype, shape},
                                                       static_cast<int>(iterations));
    if (dtype != flashrnn::DType::fp32)
        throw UsageError("the reference backend computes in float64: --dtype is for the GPU backends");
    const newton::CellInfo info = newton::cell_info(cell);
    std::mt19937_64 rng(42);
    // Parameters within the paper's clip (|a| <= 0.5, App. C.1).
    auto inputs = random_tensor(flashrnn::sizes_of(newton::inputs_shape(info, shape)), rng, 1.0);
    auto parameters = random_tensor(flashrnn::sizes_of(newton::parameters_shape(info, shape)), rng, 0.5);
    auto h0 = random_tensor(flashrnn::sizes_of(newton::state_shape(info, shape)), rng, 0.5);
    const reference::NewtonInputs in{inputs.view(), parameters.view(), h0.view()};
    const auto start = std::chrono::steady_clock::now();
    const auto sequential = reference::newton_sequential_forward(cell, shape, in);
    const auto after_sequential = std::chrono::steady_clock::now();
    const auto solved = reference::newton_solve(
        cell, shape, in, {.max_iterations = static_cast<int>(iterations), .tolerance = {}},
        reference::ReductionMethod::prefix);
    const auto after_newton = std::chrono::steady_clock::now();
    auto d_states = random_tensor(sequential.states.shape, rng, 1.0);
    const auto gradients =
        reference::newton_backward(cell, shape, {in, solved.states.view(), d_states.view(), std::nullopt});
    const auto end = std::chrono::steady_clock::now();
    double difference = 0, norm = 0;
    for (std::size_t i = 0; i < solved.states.values.size(); ++i)
        difference = std::max(difference, std::abs(solved.states.values[i] - sequential.states.values[i]));
    for (double v : gradients.d_parameters.values)
        norm += v * v;
    const auto ms = [](auto from, auto to) {
        return std::chrono::duration<double, std::milli>(to - from).count();
    };
    std::printf(
        "%s, %s, reference (CPU float64): sequential forward %.3f ms, Newton forward %.3f ms (%d "
        "iterations, max residual %.3g, max |Newton - sequential| %.3g), backward %.3f ms, |d_parameters| = "
        "%.6g\n",
        std::string(info.name).c_str(), newton::to_string(shape).c_str(), ms(start, after_sequential),
        ms(after_sequential, after_newton), solved.statistics.iterations, solved.statistics.max_residual,
        difference, ms(after_newton, end), std::sqrt(norm));
    return difference <= 1e-6 ? 0 : 1;
}

int run(std::map<std::string, std::string> options) {
    const std::string cell_name = take(options, "cell");
    for (flashrnn::newton::Cell newton_cell : flashrnn::newton::all_cells)
        if (flashrnn::newton::to_string(newton_cell) == cell_name) return run_newton(newton_cell, options);
    const flashrnn::Cell cell = flashrnn::parse_cell(cell_name);
    flashrnn::ProblemShape problem;
    problem.heads = take_positive(options, "heads");
    problem.head_dim = take_positive(options, "head-dim");
    problem.batch = take_positive(options, "batch");
    problem.time_steps = take_positive(options, "steps");
    const std::string backend = take(options, "backend", "reference");
    const std::string dtype = take(options, "dtype", "fp32");
    no_options_left(options);
    flashrnn::parse_dtype(dtype);
    if (backend != "reference" && backend != "alternating" && backend != "fused")
        throw UsageError("unknown backend '" + backend + "' for run (reference, alternating or fused)");
    flashrnn::validate(problem);
    using flashrnn::tools::GpuBackend;
    if (backend != "reference")
        return flashrnn::tools::run_gpu_backend(backend == "fused" ? GpuBackend::fused
                                                                   : GpuBackend::alternating,
                                                cell, problem, flashrnn::parse_dtype(dtype));
    const flashrnn::CellInfo info = flashrnn::cell_info(cell);
    std::mt19937_64 rng(42);
    const double r_scale = 1.0 / std::sqrt(static_cast<double>(problem.head_dim));
    auto wx = random_tensor(flashrnn::sizes_of(flashrnn::gate_inputs_shape(info, problem)), rng, 1.0);
    auto r =
        random_tensor(flashrnn::sizes_of(flashrnn::recurrent_weights_shape(info, problem)), rng, r_scale);
    auto b = random_tensor(flashrnn::sizes_of(flashrnn::bias_shape(info, problem)), rng, 0.5);
    auto s0 = random_tensor(flashrnn::sizes_of(flashrnn::states_shape(info, problem)), rng, 0.5);
    const auto start = std::chrono::steady_clock::now();
    const auto fwd = flashrnn::reference::forward(cell, problem, {wx.view(), r.view(), b.view(), s0.view()});
    const auto mid = std::chrono::steady_clock::now();
    auto d_states = random_tensor(fwd.states.shape, rng, 1.0);
    const auto bwd = flashrnn::reference::backward(
        cell, problem, {wx.view(), r.view(), b.view(), fwd.states.view(), d_states.view(), std::nullopt});
    const auto end = std::chrono::steady_clock::now();
    double norm = 0;
    for (double v : bwd.d_recurrent_weights.values)
        norm += v * v;
    std::printf("%s, %s, reference (CPU float64): forward %.3f ms, backward %.3f ms, |dR| = %.6g\n",
                std::string(info.name).c_str(), flashrnn::to_string(problem).c_str(),
                std::chrono::duration<double, std::milli>(mid - start).count(),
                std::chrono::duration<double, std::milli>(end - mid).count(), std::sqrt(norm));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    try {
        if (command == "tune") return tune(parse_options(argc, argv));
        if (command == "run") return run(parse_options(argc, argv));
        throw UsageError(command.empty() ? "missing command" : "unknown command '" + command + "'");
    } catch (const UsageError& e) {
        std::fprintf(stderr, "flashrnn: %s\n\n%s", e.what(), kUsage);
        return 2;
    } catch (const flashrnn::ShapeError& e) {   // an impossible shape or option
        std::fprintf(stderr, "%s\n", e.what()); // the library's messages name their source
        return 2;
    } catch (const flashrnn::UnsupportedError& e) { // unknown cell, dtype or preset
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    } catch (const std::exception& e) { // no configuration fits, no GPU present
        std::fprintf(stderr, "flashrnn: %s\n", e.what());
        return 1;
    }
}

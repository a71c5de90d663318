#include "cli_command.hpp"

#include "cuda/fused/fused_tuning.hpp"
#include "flashrnn/tiling/fused_compile.hpp"
#include "flashrnn/tiling/fused_tiling.hpp"
#include "flashrnn/tiling/scan_launch.hpp"
#include "tiling/pointwise_launch.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>

namespace flashrnn::tools {
namespace {

using Options = std::map<std::string, std::string>;

// `--key value` pairs after the command word.
Options parse_options(const std::vector<std::string>& arguments) {
    Options options;
    for (std::size_t i = 1; i < arguments.size(); ++i) {
        const std::string& key = arguments[i];
        if (key.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + key + "'");
        if (i + 1 >= arguments.size()) throw UsageError("option " + key + " needs a value");
        options[key.substr(2)] = arguments[++i];
    }
    return options;
}

std::string take(Options& options, const std::string& key, const char* fallback = nullptr) {
    auto it = options.find(key);
    if (it == options.end()) {
        if (!fallback) throw UsageError("missing --" + key);
        return fallback;
    }
    std::string value = it->second;
    options.erase(it);
    return value;
}

std::int64_t take_positive(Options& options, const std::string& key) {
    const std::string text = take(options, key);
    // std::from_chars takes no white space and no '+' (std::stoll took "\f40967" as 40967).
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || stop != end || value <= 0)
        throw UsageError("--" + key + " must be a positive integer, got '" + text + "'");
    return value;
}

void no_options_left(const Options& options) {
    if (!options.empty()) throw UsageError("unknown option --" + options.begin()->first);
}

// A preset's name is checked when the command is read (UnsupportedError); "device" when it runs.
void check_gpu(const std::string& gpu) {
    if (gpu != "device") preset(gpu);
}

DeviceLimits limits_of(const std::string& gpu) {
    return gpu == "device" ? device_limits_of(0) : preset(gpu);
}

TuneScanCommand parse_tune_scan(Options options) {
    TuneScanCommand command;
    command.kernel = take(options, "kernel");
    command.length = take_positive(options, "length");
    command.sequences = options.count("sequences") ? take_positive(options, "sequences") : 132 * 100;
    command.gpu = take(options, "gpu", "");
    command.dtype_name = take(options, "dtype", "bf16");
    const std::string aligned = take(options, "aligned", "yes");
    no_options_left(options);
    if (command.kernel != "linrec" && command.kernel != "rglru")
        throw UsageError("unknown scan kernel '" + command.kernel +
                         "' (linrec, rglru, newton-gru or newton-lstm)");
    if (aligned != "yes" && aligned != "no")
        throw UsageError("--aligned must be yes or no, got '" + aligned + "'");
    command.aligned = aligned == "yes";
    parse_dtype(command.dtype_name);
    if (!command.gpu.empty()) check_gpu(command.gpu);
    return command;
}

// --backend of the recurrent cells: `valid` lists the names the command takes; "auto" is short for
// automatic.
std::string take_backend(Options& options, const char* fallback, const std::string& command,
                         const std::vector<std::string>& valid) {
    std::string backend = take(options, "backend", fallback);
    if (backend == "auto") backend = "automatic";
    std::string names;
    for (std::size_t i = 0; i < valid.size(); ++i) {
        if (backend == valid[i]) return backend;
        names += (i == 0 ? "" : i + 1 == valid.size() ? " or " : ", ") + valid[i];
    }
    throw UsageError("unknown backend '" + backend + "' for " + command + " (" + names + ")");
}

std::int64_t take_iterations(Options& options) {
    return options.count("iterations") ? take_positive(options, "iterations") : 3;
}

void check_iterations(std::int64_t iterations) {
    if (iterations > 1000) throw UsageError("--iterations must be at most 1000");
}

TuneNewtonCommand parse_tune_newton(Options options) {
    TuneNewtonCommand command;
    command.kernel = take(options, "kernel");
    newton::Shape& shape = command.problem.shape;
    shape.time_steps = take_positive(options, "steps");
    shape.batch = take_positive(options, "batch");
    shape.units = take_positive(options, "units");
    command.gpu = take(options, "gpu", "");
    command.problem.dtype = parse_dtype(take(options, "dtype", "fp32"));
    command.iterations = take_iterations(options);
    no_options_left(options);
    check_iterations(command.iterations);
    if (command.problem.dtype != DType::fp32 && command.problem.dtype != DType::bf16)
        throw UsageError("--dtype must be fp32 or bf16 for the Newton solvers");
    command.problem.cell =
        command.kernel == "newton-gru" ? newton::Cell::flash_gru : newton::Cell::flash_lstm;
    newton::validate("tune", shape);
    if (!command.gpu.empty()) check_gpu(command.gpu);
    return command;
}

bool is_newton_kernel(const std::string& kernel) {
    return kernel == "newton-gru" || kernel == "newton-lstm";
}

Command parse_tune(Options options) {
    if (options.count("kernel") && is_newton_kernel(options["kernel"]))
        return parse_tune_newton(std::move(options));
    if (options.count("kernel")) return parse_tune_scan(std::move(options));
    TuneCommand command;
    command.gpu = take(options, "gpu");
    command.cell = parse_cell(take(options, "cell"));
    command.heads = take_positive(options, "heads");
    command.head_dim = take_positive(options, "head-dim");
    command.batch = take_positive(options, "batch");
    const std::string dtype = take(options, "dtype", "bf16");
    command.backend = rnn::parse_backend(
        take_backend(options, "alternating", "tune", {"alternating", "fused", "automatic"}));
    const std::string compile = take(options, "compile", "no");
    no_options_left(options);
    if (compile != "yes" && compile != "no")
        throw UsageError("--compile must be yes or no, got '" + compile + "'");
    command.compile = compile == "yes";
    if (command.compile && command.backend != rnn::Backend::fused)
        throw UsageError("--compile yes applies to --backend fused");
    command.dtype = parse_dtype(dtype);
    // The library's size checks (one time step): B x NH x DH and the weights must fit; the
    // pointwise launch then takes DH as an int.
    validate(ProblemShape{
        .time_steps = 1, .batch = command.batch, .heads = command.heads, .head_dim = command.head_dim});
    check_gpu(command.gpu);
    if (command.backend != rnn::Backend::alternating) {
        constexpr std::int64_t largest = 1 << 24;
        if (command.heads > largest || command.head_dim > largest || command.batch > largest)
            throw UsageError("--heads, --head-dim and --batch must be at most " + std::to_string(largest));
    }
    return command;
}

RunNewtonCommand parse_run_newton(newton::Cell cell, Options options) {
    RunNewtonCommand command;
    command.problem.cell = cell;
    newton::Shape& shape = command.problem.shape;
    shape.time_steps = take_positive(options, "steps");
    shape.batch = take_positive(options, "batch");
    shape.units = take_positive(options, "units");
    command.iterations = take_iterations(options);
    const std::string backend =
        take_backend(options, "reference", "run --cell " + std::string(newton::to_string(cell)),
                     {"reference", "newton", "sequential", "fused", "automatic"});
    command.problem.dtype = parse_dtype(take(options, "dtype", "fp32"));
    no_options_left(options);
    check_iterations(command.iterations);
    newton::validate("run", shape);
    if (backend != "reference")
        command.gpu_backend = newton::parse_backend(backend);
    else if (command.problem.dtype != DType::fp32)
        throw UsageError("the reference backend computes in float64: --dtype is for the GPU backends");
    return command;
}

Command parse_run(Options options) {
    const std::string cell_name = take(options, "cell");
    for (newton::Cell newton_cell : newton::all_cells)
        if (newton::to_string(newton_cell) == cell_name)
            return parse_run_newton(newton_cell, std::move(options));
    RunCommand command;
    command.cell = parse_cell(cell_name);
    command.problem.heads = take_positive(options, "heads");
    command.problem.head_dim = take_positive(options, "head-dim");
    command.problem.batch = take_positive(options, "batch");
    command.problem.time_steps = take_positive(options, "steps");
    const std::string backend =
        take_backend(options, "reference", "run", {"reference", "alternating", "fused", "automatic"});
    if (backend != "reference") command.gpu_backend = rnn::parse_backend(backend);
    const std::string dtype = take(options, "dtype", "fp32");
    no_options_left(options);
    command.dtype = parse_dtype(dtype);
    validate(command.problem);
    return command;
}

// The GPU of the commands whose --gpu is optional: the device when present, else the H100 preset.
std::string gpu_or_default(const std::string& gpu) {
    if (!gpu.empty()) return gpu;
    return cuda_device_available() ? "device" : "h100_sxm";
}

void print_pass_cost(std::FILE* out, const char* what, const newton::PassCost& cost, double bandwidth) {
    char issue[48] = "";
    if (cost.issue_seconds > 0)
        std::snprintf(issue, sizeof issue, ", issue %.3f ms", cost.issue_seconds * 1e3);
    std::fprintf(
        out, "  %-19s %9.3f ms = max(%.4g GB / %.0f GB/s = %.3f ms, chain %.3f ms%s) + %d launches x 4 us\n",
        what, cost.seconds * 1e3, cost.bytes / 1e9, bandwidth / 1e9, cost.bytes / bandwidth * 1e3,
        cost.latency_seconds * 1e3, issue, cost.launches);
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

Command parse_command(const std::vector<std::string>& arguments) {
    const std::string command = arguments.empty() ? "" : arguments[0];
    if (command == "--help" || command == "-h" || command == "help") return HelpCommand{};
    if (command == "tune") return parse_tune(parse_options(arguments));
    if (command == "run") return parse_run(parse_options(arguments));
    throw UsageError(command.empty() ? "missing command" : "unknown command '" + command + "'");
}

namespace {

// `tune --backend fused --compile yes`: what the compile loop ended in for one pass; false when no
// configuration compiled without spilling.
bool print_compiled(std::FILE* out, FusedPass pass, const DeviceLimits& limits,
                    const FusedTilingRequest& request) {
    const FusedCompileResult compiled = compile_fused_tiling(limits, request);
    const std::string architecture = "sm_" + std::to_string(limits.compute_capability());
    const std::string pass_name = std::string(to_string(pass));
    if (!compiled.history.empty())
        std::fprintf(out, "fused %s kernel, what the feedback tried (%s):\n%s", pass_name.c_str(),
                     architecture.c_str(), compiled.history.c_str());
    if (!compiled.compiled()) {
        std::fprintf(
            out,
            "fused %s kernel: no configuration compiles for %s without spilling after %d attempt(s): %s\n",
            pass_name.c_str(), architecture.c_str(), compiled.attempts, compiled.refusal.c_str());
        return false;
    }
    std::fprintf(out,
                 "fused %s kernel compiled for %s (NVRTC, attempt %d): %d registers per thread, no spills, "
                 "%d threads per block, %d registers of R per thread%s\n",
                 pass_name.c_str(), architecture.c_str(), compiled.attempts, compiled.registers_per_thread,
                 compiled.traits.threads_per_block, compiled.traits.r_registers_per_thread,
                 compiled.spills_relaxed ? " (spills excluding only blocks of as few registers)" : "");
    if (compiled.attempts > 1) std::fprintf(out, "%s", describe(compiled.traits).c_str());
    return true;
}

} // namespace

// `tune --backend fused`: the fused kernels' traits for both passes and the solver's time, or the
// limits that conflict (TilingError). `tune --backend automatic`: the cost rule's choice for each pass
// on the model's configuration, and why.
int run_tune(const TuneCommand& command, std::FILE* out) {
    const DeviceLimits limits = limits_of(command.gpu);
    if (command.backend == rnn::Backend::automatic) {
        const rnn::Problem problem{
            command.cell,
            command.dtype,
            {.time_steps = 1, .batch = command.batch, .heads = command.heads, .head_dim = command.head_dim}};
        std::fprintf(out, "gpu: %s\ncell: %s, %lld heads x %lld, batch %lld, %s\n", limits.name.c_str(),
                     std::string(cell_info(command.cell).name).c_str(), static_cast<long long>(command.heads),
                     static_cast<long long>(command.head_dim), static_cast<long long>(command.batch),
                     std::string(to_string(command.dtype)).c_str());
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
            std::fprintf(out, "automatic %s: %s\n", std::string(to_string(pass)).c_str(),
                         rnn::automatic_choice(limits, problem, pass).reason.c_str());
        return 0;
    }
    if (command.backend == rnn::Backend::fused) {
        int status = 0;
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward}) {
            // Limited by the environment's FLASHRNN_FUSED_* as the backend is (fused_tuning.hpp).
            const FusedTilingRequest request =
                fused::limited(fused_tiling_request(pass, command.cell, command.dtype,
                                                    {.time_steps = 1,
                                                     .batch = command.batch,
                                                     .heads = command.heads,
                                                     .head_dim = command.head_dim}),
                               fused::tiling_limits());
            const FusedTilingResult result = choose_fused_tiling(limits, request);
            std::fprintf(out, "fused %s kernel (solved in %.2f ms, %llu search nodes): %s",
                         std::string(to_string(pass)).c_str(), result.solve_seconds * 1e3,
                         static_cast<unsigned long long>(result.search_nodes),
                         describe(result.traits).c_str());
            if (command.compile && !print_compiled(out, pass, limits, request)) status = 1;
        }
        return status;
    }
    const auto start = std::chrono::steady_clock::now();
    const PointwiseLaunch launch =
        choose_pointwise_launch(limits, {command.batch * command.heads * command.head_dim,
                                         static_cast<int>(command.head_dim), bytes_of(command.dtype)});
    const double ms = milliseconds_since(start);
    std::fprintf(out, "gpu: %s\ncell: %s, %lld heads x %lld, batch %lld, %s\n", limits.name.c_str(),
                 std::string(cell_info(command.cell).name).c_str(), static_cast<long long>(command.heads),
                 static_cast<long long>(command.head_dim), static_cast<long long>(command.batch),
                 std::string(to_string(command.dtype)).c_str());
    std::fprintf(out, "alternating pointwise kernel: %s (solved in %.2f ms)\n", describe(launch).c_str(), ms);
    return 0;
}

// `tune --kernel linrec|rglru`: the scan launch model's choice for both passes.
int run_tune_scan(const TuneScanCommand& command, std::FILE* out) {
    const DeviceLimits limits = limits_of(gpu_or_default(command.gpu));
    const int bytes = bytes_of(parse_dtype(command.dtype_name));
    std::fprintf(out, "gpu: %s\n%s, %lld sequences of length %lld, %s, rows %s\n", limits.name.c_str(),
                 command.kernel.c_str(), static_cast<long long>(command.sequences),
                 static_cast<long long>(command.length), command.dtype_name.c_str(),
                 command.aligned ? "aligned to 16 bytes" : "not aligned (no vector access)");
    for (const char* pass : {"forward", "backward"}) {
        const ScanKernel scan_kernel = parse_scan_kernel(command.kernel + "_" + pass);
        const auto start = std::chrono::steady_clock::now();
        const ScanConfig config = choose_scan_config(
            limits, scan_kernel, {command.sequences, command.length, bytes, command.aligned, false});
        std::fprintf(out, "%s %s: %s (solved in %.2f ms)\n", command.kernel.c_str(), pass,
                     describe(config).c_str(), milliseconds_since(start));
    }
    return 0;
}

// `tune --kernel newton-gru|newton-lstm`: the reduction's launch (the ConstrINT model) and the cost
// model's estimates of both backends, with the automatic choice.
int run_tune_newton(const TuneNewtonCommand& command, std::FILE* out) {
    const newton::Problem& problem = command.problem;
    const newton::Shape& shape = problem.shape;
    const DeviceLimits limits = limits_of(gpu_or_default(command.gpu));
    newton::Options solve;
    solve.max_iterations = static_cast<int>(command.iterations);
    const auto start = std::chrono::steady_clock::now();
    const ReductionLaunch r = newton::solver_reduction_launch(limits, problem);
    const double ms = milliseconds_since(start);
    const newton::CostEstimate cost = newton::estimate_cost(limits, problem, solve);
    std::fprintf(out, "gpu: %s (%d SMs, %.0f GB/s peak memory bandwidth)\n", limits.name.c_str(),
                 limits.sm_count, limits.memory_bandwidth / 1e9);
    std::fprintf(out, "%s: %s, %lld sequences, %lld Newton iterations\n", command.kernel.c_str(),
                 newton::to_string(problem).c_str(), static_cast<long long>(shape.sequences()),
                 static_cast<long long>(command.iterations));
    std::fprintf(out,
                 "reduction (%s, fp32 Jacobians and residuals): %s; %lld segments per sequence of "
                 "max_sequential_steps %lld tiles (%lld blocks, %d launches, workspace %zu bytes) "
                 "(solved in %.2f ms)\n",
                 std::string(to_string(newton::reduction_kernel(problem.cell))).c_str(),
                 describe(r.config).c_str(), static_cast<long long>(r.segments),
                 static_cast<long long>(r.max_sequential_steps),
                 static_cast<long long>(r.segments * shape.sequences()), r.launches(), r.workspace_bytes, ms);
    std::fprintf(out,
                 "cost model (estimates; bandwidth %.0f GB/s assumed, chains of sequential steps and of the "
                 "reduction's tiles):\n",
                 cost.bandwidth / 1e9);
    print_pass_cost(out, "newton forward", cost.newton_forward, cost.bandwidth);
    print_pass_cost(out, "sequential forward", cost.sequential_forward, cost.bandwidth);
    print_pass_cost(out, "newton backward", cost.newton_backward, cost.bandwidth);
    print_pass_cost(out, "sequential backward", cost.sequential_backward, cost.bandwidth);
    std::fprintf(out, "fused forward (%s): %s, one block per sequence\n",
                 std::string(to_string(newton::fused_kernel(problem.cell))).c_str(),
                 describe(newton::fused_config(limits, problem)).c_str());
    print_pass_cost(out, "fused forward", cost.fused_forward, cost.bandwidth);
    std::fprintf(out, "fused backward (%s): %s, one block per sequence\n",
                 std::string(to_string(newton::fused_backward_kernel(problem.cell))).c_str(),
                 describe(newton::fused_backward_config(limits, problem)).c_str());
    print_pass_cost(out, "fused backward", cost.fused_backward, cost.bandwidth);
    // Each pass's choice against the runner-up's estimate (any backward takes any forward's states).
    const auto print_choice = [&](const char* label, const char* pass, newton::Backend choice, auto cost_of) {
        double runner_up = INFINITY;
        for (newton::Backend b :
             {newton::Backend::fused, newton::Backend::newton, newton::Backend::sequential})
            if (b != choice) runner_up = std::min(runner_up, cost_of(b).seconds);
        const double chosen = cost_of(choice).seconds;
        std::fprintf(out, "%s: %s (%s estimate %.3f ms against the runner-up's %.3f ms, %.2fx)\n", label,
                     std::string(newton::to_string(choice)).c_str(), pass, chosen * 1e3, runner_up * 1e3,
                     runner_up / chosen);
    };
    print_choice("automatic", "forward", newton::choose_backend(limits, problem, solve),
                 [&](newton::Backend b) -> const newton::PassCost& { return cost.forward(b); });
    print_choice("automatic backward", "backward", newton::choose_backward_backend(limits, problem, solve),
                 [&](newton::Backend b) -> const newton::PassCost& { return cost.backward(b); });
    return 0;
}

} // namespace flashrnn::tools

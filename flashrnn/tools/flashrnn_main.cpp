// The `flashrnn` command: `tune` shows the configurations the solver picks for a GPU and a problem,
// `run` runs a cell on random data and times it.
#include "cli_command.hpp"
#include "flashrnn/flashrnn.hpp"
#include "run_gpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace {

constexpr const char* kUsage = R"(flashrnn - recurrent-network kernels tiled by ConstrINT

usage:
  flashrnn tune --gpu GPU --cell CELL --heads NH --head-dim DH --batch B [--dtype DTYPE] [--backend BACKEND]
                [--compile yes|no]
      print the launch configuration the solver picks (or why none exists: exit status 1); with
      --backend fused --compile yes also what ptxas compiles for the GPU's architecture after the
      spills' feedback (NVRTC, no GPU needed; exit status 1 if nothing compiles without spilling)
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
      newton, fused, sequential or automatic: on the GPU, checked against the float64 references (exit
      status 1 if they disagree)

  GPU      a preset (h100_sxm or h100, h200, a100_80gb or a100, a40, rtx3090, l4) or 'device'
  CELL     lstm, gru, slstm or elman
  NEWTON_CELL  flash_gru or flash_lstm (diagonal cells solved by Newton's method over the sequence)
  NEWTON_BACKEND  reference (default), newton, fused, sequential or automatic (the cost model's choice)
  DTYPE    bf16 (default), fp16 or fp32
  BACKEND  tune: alternating (default), fused or automatic (auto: the choice per pass and why, from the
           tiling model); run: reference (default, CPU float64), alternating, fused or automatic (GPU;
           checked against the reference on the same inputs, exit status 1 if they disagree)
exit status: 0 done, 1 no configuration fits, 2 bad usage
)";

// The message of an error, starting with "flashrnn" once: most of the library's messages name
// their source already ("flashrnn: cannot read CUDA device 0"), others do not ("pointwise launch: ...").
std::string with_program_name(const std::string& message) {
    return message.rfind("flashrnn", 0) == 0 ? message : "flashrnn: " + message;
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

// `run --cell flash_gru|flash_lstm`: the float64 references of the Newton family on random data, or a
// GPU backend checked against them.
int run_newton(const flashrnn::tools::RunNewtonCommand& command) {
    namespace newton = flashrnn::newton;
    namespace reference = flashrnn::reference;
    if (command.gpu_backend)
        return flashrnn::tools::run_newton_gpu_backend(*command.gpu_backend, command.problem,
                                                       static_cast<int>(command.iterations));
    const newton::Cell cell = command.problem.cell;
    const newton::Shape& shape = command.problem.shape;
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
        cell, shape, in, {.max_iterations = static_cast<int>(command.iterations), .tolerance = {}},
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

int run(const flashrnn::tools::RunCommand& command) {
    const flashrnn::Cell cell = command.cell;
    const flashrnn::ProblemShape& problem = command.problem;
    if (command.gpu_backend)
        return flashrnn::tools::run_gpu_backend(*command.gpu_backend, cell, problem, command.dtype);
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
    using namespace flashrnn::tools;
    try {
        const Command command =
            parse_command(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
        return std::visit(
            [](const auto& c) -> int {
                using T = std::decay_t<decltype(c)>;
                if constexpr (std::is_same_v<T, HelpCommand>) {
                    std::fputs(kUsage, stdout);
                    return 0;
                } else if constexpr (std::is_same_v<T, TuneCommand>) {
                    return run_tune(c, stdout);
                } else if constexpr (std::is_same_v<T, TuneScanCommand>) {
                    return run_tune_scan(c, stdout);
                } else if constexpr (std::is_same_v<T, TuneNewtonCommand>) {
                    return run_tune_newton(c, stdout);
                } else if constexpr (std::is_same_v<T, RunCommand>) {
                    return run(c);
                } else {
                    return run_newton(c);
                }
            },
            command);
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
        std::fprintf(stderr, "%s\n", with_program_name(e.what()).c_str());
        return 1;
    }
}

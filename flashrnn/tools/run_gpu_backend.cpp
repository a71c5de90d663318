#include "run_gpu_backend.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#if FLASHRNN_WITH_CUDA
#include "flashrnn/rnn/fused.hpp"
#include "testing/device_tensor.hpp"
#include "testing/rnn_arguments.hpp"
#endif

namespace flashrnn::tools {

#if FLASHRNN_WITH_CUDA
namespace {

void ok(cudaError_t status, const char* what) {
    device_tensor_check(status, what);
}

std::size_t count(std::int64_t size) {
    return static_cast<std::size_t>(size);
}

std::vector<double> random_values(std::size_t count, double scale, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> uniform(-scale, scale);
    std::vector<double> values(count);
    for (double& v : values)
        v = uniform(rng);
    return values;
}

// The largest |gpu - reference| relative to the reference's largest magnitude (at least 1).
double relative_error(const std::vector<double>& gpu, const std::vector<double>& reference) {
    double scale = 1, error = 0;
    for (double r : reference)
        scale = std::max(scale, std::abs(r));
    for (std::size_t i = 0; i < gpu.size(); ++i) {
        const double e = std::abs(gpu[i] - reference[i]);
        error = std::isnan(e) ? INFINITY : std::max(error, e);
    }
    return error / scale;
}

struct PassTimes {
    float forward_ms = 0, backward_ms = 0;
};

// One forward and one backward on the default stream, timed with CUDA events after a first pair that
// warms up (launch configurations solved, libraries initialised, kernels compiled there).
template <class Forward, class Backward>
PassTimes time_passes(const char* what, Forward forward, Backward backward) {
    cudaEvent_t start, mid, stop;
    ok(cudaEventCreate(&start), "cudaEventCreate");
    ok(cudaEventCreate(&mid), "cudaEventCreate");
    ok(cudaEventCreate(&stop), "cudaEventCreate");
    auto pass = [&] {
        ok(cudaEventRecord(start, nullptr), "cudaEventRecord");
        forward();
        ok(cudaEventRecord(mid, nullptr), "cudaEventRecord");
        backward();
        ok(cudaEventRecord(stop, nullptr), "cudaEventRecord");
        ok(cudaEventSynchronize(stop), what);
    };
    pass();
    pass();
    PassTimes times;
    ok(cudaEventElapsedTime(&times.forward_ms, start, mid), "cudaEventElapsedTime");
    ok(cudaEventElapsedTime(&times.backward_ms, mid, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(mid);
    cudaEventDestroy(stop);
    return times;
}

} // namespace

int run_gpu_backend(rnn::Backend backend, Cell cell, const ProblemShape& problem, DType dtype) {
    const std::string name(rnn::to_string(backend));
    if (!cuda_device_available())
        throw std::runtime_error("the " + name + " backend needs a CUDA device; none is present");
    const rnn::Problem rnn_problem{cell, dtype, problem};
    const rnn::Options options{backend};
    if (options.backend == rnn::Backend::fused)
        fused::prepare(rnn_problem); // NVRTC compiles here (or the cache answers), not in the timing
    const CellInfo info = cell_info(cell);
    std::mt19937_64 rng(42);
    const std::int64_t units_per_step = problem.batch * problem.heads * problem.head_dim;
    std::vector<double> wx = random_values(count(gate_inputs_layout(info, problem).size()), 1.0, rng);
    std::vector<double> r = random_values(count(recurrent_weights_layout(info, problem).size()),
                                          1.0 / std::sqrt(static_cast<double>(problem.head_dim)), rng);
    std::vector<double> b = random_values(count(bias_layout(info, problem).size()), 0.5, rng);
    std::vector<double> s0 = random_values(count(states_layout(info, problem).size()), 0.5, rng);
    if (cell == Cell::slstm) { // the normaliser of a non-empty state is positive: n in [0.5, 1.5]
        const std::size_t first = count(states_layout(info, problem).offset(cells::Slstm::n, 0, 0, 0));
        for (std::size_t i = first; i < first + count(units_per_step); ++i)
            s0[i] += 1.0;
    }
    std::vector<double> d_states =
        random_values(count(state_sequence_layout(info, problem).size()), 1.0, rng);
    // The reference sees what the GPU holds: the inputs rounded to the dtype.
    for (std::vector<double>* values : {&wx, &r, &b, &s0, &d_states})
        *values = rounded_to(dtype, *values);
    DeviceTensor d_wx_in(dtype, wx), d_r(dtype, r), d_b(dtype, b), d_s0(dtype, s0), d_up(dtype, d_states);
    DeviceTensor states(dtype, d_states.size()), last(dtype, s0.size());
    DeviceTensor cache(DType::fp32, rnn::gate_cache_elements(rnn_problem));
    DeviceTensor d_wx(dtype, wx.size()), d_rw(dtype, r.size()), d_bias(dtype, b.size()),
        d_init(dtype, s0.size());
    const std::size_t fw_bytes = rnn::forward_workspace_bytes(rnn_problem, options);
    const std::size_t bw_bytes = rnn::backward_workspace_bytes(rnn_problem, options);
    DeviceTensor fw(DType::fp32, fw_bytes / 4 + 1), bw(DType::fp32, bw_bytes / 4 + 1);
    const rnn::ForwardArgs forward_args =
        testing::forward_args(rnn_problem, d_wx_in, d_r, d_b, d_s0, states, &last, &cache, fw);
    const rnn::BackwardArgs backward_args = testing::backward_args(rnn_problem, d_r, states, cache, &d_up,
                                                                   nullptr, d_wx, d_rw, d_bias, d_init, bw);

    const auto [forward_ms, backward_ms] = time_passes(
        name.c_str(), [&] { rnn::forward(rnn_problem, forward_args, options, nullptr); },
        [&] { rnn::backward(rnn_problem, backward_args, options, nullptr); });

    const std::vector<std::int64_t> seq_shape = sizes_of(state_sequence_shape(info, problem));
    const reference::ForwardResult fwd =
        reference::forward(cell, problem,
                           {{wx, sizes_of(gate_inputs_shape(info, problem))},
                            {r, sizes_of(recurrent_weights_shape(info, problem))},
                            {b, sizes_of(bias_shape(info, problem))},
                            {s0, sizes_of(states_shape(info, problem))}});
    const reference::BackwardResult bwd =
        reference::backward(cell, problem,
                            {{wx, sizes_of(gate_inputs_shape(info, problem))},
                             {r, sizes_of(recurrent_weights_shape(info, problem))},
                             {b, sizes_of(bias_shape(info, problem))},
                             fwd.states.view(),
                             ConstHostView{d_states, seq_shape},
                             std::nullopt});
    // The fused kernels multiply fp32 R on the tensor cores in tf32, whose 10-bit mantissa is fp16's:
    // fp16's tolerance where a pass ran fused, as the GPU tests do (tests/gpu/test_fused.cpp); the
    // automatic backend resolves per pass. The gradients also take the forward's gate cache.
    const auto tolerance_of = [&](bool fused) {
        return dtype == DType::fp32 && !fused ? 1e-4 : dtype == DType::bf16 ? 5e-2 : 1e-2;
    };
    const auto ran_fused = [&](FusedPass pass) {
        return rnn::resolve_backend(rnn_problem, backend, pass) == rnn::Backend::fused;
    };
    const bool forward_fused = ran_fused(FusedPass::forward);
    const double states_tolerance = tolerance_of(forward_fused);
    const double gradient_tolerance = tolerance_of(forward_fused || ran_fused(FusedPass::backward));
    const double states_error = relative_error(states.download(), fwd.states.values);
    double gradient_error = relative_error(d_wx.download(), bwd.d_gate_inputs.values);
    gradient_error =
        std::max(gradient_error, relative_error(d_rw.download(), bwd.d_recurrent_weights.values));
    gradient_error = std::max(gradient_error, relative_error(d_bias.download(), bwd.d_bias.values));
    std::printf("%s, %s, %s (GPU %s): forward %.3f ms, backward %.3f ms\n", std::string(info.name).c_str(),
                to_string(problem).c_str(), name.c_str(), std::string(to_string(dtype)).c_str(), forward_ms,
                backward_ms);
    if (backend == rnn::Backend::automatic)
        for (FusedPass pass : {FusedPass::forward, FusedPass::backward})
            std::printf("automatic %s: %s\n", std::string(to_string(pass)).c_str(),
                        rnn::automatic_choice(rnn_problem, pass).reason.c_str());
    std::printf("largest error against the float64 reference (relative to the largest value): states %.2e, "
                "gradients %.2e (tolerances %.0e / %.0e)\n",
                states_error, gradient_error, states_tolerance, gradient_tolerance);
    return states_error <= states_tolerance && gradient_error <= gradient_tolerance ? 0 : 1;
}

int run_newton_gpu_backend(newton::Backend backend, const newton::Problem& problem, int iterations) {
    if (!cuda_device_available())
        throw std::runtime_error("the " + std::string(newton::to_string(backend)) +
                                 " backend needs a CUDA device; none is present");
    const newton::CellInfo info = newton::cell_info(problem.cell);
    const newton::Shape& shape = problem.shape;
    const DType dtype = problem.dtype;
    newton::Options options;
    options.backend = backend;
    options.max_iterations = iterations;
    const newton::Backend chosen = newton::resolve_backend(problem, options);
    const newton::Backend chosen_backward = newton::resolve_backward_backend(problem, options);
    const auto inputs_sizes = newton::inputs_shape(info, shape).sizes();
    const auto parameter_sizes = newton::parameters_shape(info, shape).sizes();
    const auto state_sizes = newton::state_shape(info, shape).sizes();
    const auto sequence_sizes = newton::state_sequence_shape(info, shape).sizes();
    std::mt19937_64 rng(42);
    const std::vector<double> inputs =
        rounded_to(dtype, random_values(count(inputs_sizes.product()), 1.0, rng));
    const std::vector<double> parameters =
        rounded_to(DType::fp32, random_values(count(parameter_sizes.product()), 0.5, rng));
    const std::vector<double> h0 =
        rounded_to(DType::fp32, random_values(count(state_sizes.product()), 0.5, rng));
    const std::vector<double> d_states =
        rounded_to(dtype, random_values(count(sequence_sizes.product()), 1.0, rng));
    const DeviceTensor d_in(dtype, inputs), d_p(DType::fp32, parameters), d_h0(DType::fp32, h0);
    const DeviceTensor d_up(dtype, d_states);
    DeviceTensor states(dtype, count(sequence_sizes.product())), last(DType::fp32, h0.size());
    DeviceTensor statistics(DType::fp32, newton::kStatisticsElements);
    DeviceTensor d_inputs(dtype, inputs.size()), d_parameters(DType::fp32, parameters.size()),
        d_initial(DType::fp32, h0.size());
    const std::size_t fw_bytes = newton::forward_workspace_bytes(problem, options);
    const std::size_t bw_bytes = newton::backward_workspace_bytes(problem, options);
    const DeviceTensor fw(DType::fp32, fw_bytes / 4 + 1), bw(DType::fp32, bw_bytes / 4 + 1);
    const newton::ForwardArgs forward_args{
        d_in.view(inputs_sizes),       d_p.view(parameter_sizes),
        d_h0.view(state_sizes),        states.view(sequence_sizes),
        last.view(state_sizes),        statistics.view({newton::kStatisticsElements}),
        Workspace{fw.data(), fw_bytes}};
    const newton::BackwardArgs backward_args{d_in.view(inputs_sizes),     d_p.view(parameter_sizes),
                                             d_h0.view(state_sizes),      states.view(sequence_sizes),
                                             d_up.view(sequence_sizes),   ConstTensorView{},
                                             d_inputs.view(inputs_sizes), d_parameters.view(parameter_sizes),
                                             d_initial.view(state_sizes), Workspace{bw.data(), bw_bytes}};
    const auto [forward_ms, backward_ms] = time_passes(
        "newton backend", [&] { newton::forward(problem, forward_args, options, nullptr); },
        [&] { newton::backward(problem, backward_args, options, nullptr); });

    const reference::NewtonInputs in{{inputs, sizes_of(newton::inputs_shape(info, shape))},
                                     {parameters, sizes_of(newton::parameters_shape(info, shape))},
                                     ConstHostView{h0, sizes_of(newton::state_shape(info, shape))}};
    const reference::NewtonForwardResult fwd = reference::newton_sequential_forward(problem.cell, shape, in);
    // The backward's reference at the GPU's states (the backward is linear in them: eq. 6).
    const std::vector<double> gpu_states = states.download();
    const reference::NewtonGradients bwd = reference::newton_backward(
        problem.cell, shape,
        {in, ConstHostView{gpu_states, sizes_of(newton::state_sequence_shape(info, shape))},
         ConstHostView{d_states, sizes_of(newton::state_sequence_shape(info, shape))}, std::nullopt});
    const std::vector<double> stats = statistics.download();
    const double tolerance = dtype == DType::fp32 ? 1e-4 : 2e-2;
    const double states_error = relative_error(gpu_states, fwd.states.values);
    double gradient_error = relative_error(d_inputs.download(), bwd.d_inputs.values);
    gradient_error =
        std::max(gradient_error, relative_error(d_parameters.download(), bwd.d_parameters.values));
    gradient_error =
        std::max(gradient_error, relative_error(d_initial.download(), bwd.d_initial_state.values));
    std::printf("%s, %s, %s (GPU %s, %s %s): forward %.3f ms (%g iterations, max residual %.3g%s), backward "
                "%.3f ms (%s)\n",
                std::string(info.name).c_str(), newton::to_string(shape).c_str(),
                std::string(newton::to_string(chosen)).c_str(), std::string(to_string(dtype)).c_str(),
                backend == newton::Backend::automatic ? "chosen by" : "asked as",
                std::string(newton::to_string(backend)).c_str(), forward_ms, stats[newton::iterations_slot],
                stats[newton::max_residual_slot], stats[newton::non_finite_slot] != 0 ? ", NON-FINITE" : "",
                backward_ms, std::string(newton::to_string(chosen_backward)).c_str());
    std::printf("largest error against the float64 reference (relative to the largest value): states %.2e, "
                "gradients %.2e (tolerance %.0e)\n",
                states_error, gradient_error, tolerance);
    return states_error <= tolerance && gradient_error <= tolerance ? 0 : 1;
}

#else

int run_gpu_backend(rnn::Backend, Cell, const ProblemShape&, DType) {
    throw std::runtime_error("the GPU backends need FlashRNN built with CUDA (nvcc was not found)");
}

int run_newton_gpu_backend(newton::Backend backend, const newton::Problem&, int) {
    throw std::runtime_error("the " + std::string(newton::to_string(backend)) +
                             " backend needs FlashRNN built with CUDA (nvcc was not found)");
}

#endif

} // namespace flashrnn::tools

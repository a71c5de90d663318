// The fused backend's host side: the tiling solved by ConstrINT, the kernel compiled for it with
// NVRTC and loaded (with the compiler's feedback when a configuration spills or cannot launch),
// the workspace and the launches.
#include "flashrnn/core/error.hpp"
#include "flashrnn/rnn/fused.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/fused/fused_compiler.hpp"
#include "cuda/fused/fused_tuning.hpp"
#include "cuda/fused/kernels/fused_params.hpp"
#include "cuda/rnn/parameter_gradients.hpp"
#include "cuda/rnn/workspace.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "rnn/backends.hpp"
#include "tiling/fused_compile_loop.hpp"
#include "tiling/memo.hpp"

namespace flashrnn::fused {
namespace {

using alternating::WorkspacePlan;

// One compiled kernel, loaded into the current context for the process's lifetime.
struct LoadedKernel {
    FusedKernelTraits traits;
    cudaKernel_t kernel = nullptr;
    long long shared_bytes = 0;
    int cluster_blocks = 1; // blocks of a cluster that share the gather (traits.multicast_gather)
};

// Why a loaded kernel cannot run as configured, and the resource it ran short of.
struct LaunchProblem {
    std::string text;
    FusedResource resource = FusedResource::registers;
    std::int64_t shared_memory_bytes = 0; // shared memory: the least dynamic bytes per block that fail
};

// The dynamic shared memory per block that keeps `blocks` blocks of the kernel from being resident
// on one SM (the least that does), or nothing when shared memory is not what stops them.
std::optional<std::int64_t> shared_memory_short(const LoadedKernel& k, int blocks) {
    std::size_t available = 0;
    cuda::check(cudaOccupancyAvailableDynamicSMemPerBlock(&available, reinterpret_cast<const void*>(k.kernel),
                                                          blocks, k.traits.threads_per_block),
                "cudaOccupancyAvailableDynamicSMemPerBlock");
    // Nothing available at all is not a limit a smaller configuration can meet.
    if (available == 0 || k.shared_bytes <= static_cast<long long>(available)) return std::nullopt;
    return static_cast<std::int64_t>(available) + 1;
}

// The launch attributes of a kernel: a cluster of a group's row blocks with the cluster exchange (the
// clusters are independent of each other: no cooperative launch), else cooperative where a head spans
// blocks, in clusters of `cluster_blocks` row blocks with the multicast gather.
struct LaunchAttributes {
    cudaLaunchAttribute values[2] = {};
};

cudaLaunchAttribute cluster_attribute(int blocks) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(blocks);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    return attribute;
}

// The launch of a kernel (blocks, threads, shared memory) with its attributes, kept in `attributes`.
cudaLaunchConfig_t launch_config(const LoadedKernel& k, LaunchAttributes& attributes, int cluster_blocks) {
    const FusedKernelTraits& t = k.traits;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(k.traits.blocks_per_launch()));
    config.blockDim = dim3(static_cast<unsigned>(t.threads_per_block));
    config.dynamicSmemBytes = static_cast<std::size_t>(k.shared_bytes);
    config.attrs = attributes.values;
    config.numAttrs = 1;
    if (t.cluster_exchange) {
        attributes.values[0] = cluster_attribute(t.row_blocks);
        return config;
    }
    attributes.values[0] = {};
    attributes.values[0].id = cudaLaunchAttributeCooperative;
    attributes.values[0].val.cooperative = t.cooperative ? 1 : 0;
    if (t.multicast_gather) {
        attributes.values[1] = cluster_attribute(cluster_blocks);
        config.numAttrs = 2;
    }
    return config;
}

cudaLaunchConfig_t launch_config(const LoadedKernel& k, LaunchAttributes& attributes) {
    return launch_config(k, attributes, k.cluster_blocks);
}

// The multicast gather's cluster: the most row blocks (of at most the portable 8, dividing a group's)
// whose clusters of the whole grid are resident at once; 1 (each block copies for itself) where none is.
int multicast_cluster_blocks(const LoadedKernel& k) {
    for (int blocks = 8; blocks >= 2; blocks /= 2) {
        if (k.traits.row_blocks % blocks != 0) continue;
        LaunchAttributes attributes;
        cudaLaunchConfig_t config = launch_config(k, attributes, blocks);
        config.attrs = &attributes.values[1]; // the occupancy query takes the cluster alone
        config.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(k.kernel), &config) !=
            cudaSuccess) {
            (void)cudaGetLastError(); // not sticky: a smaller cluster is asked next
            continue;
        }
        if (clusters * blocks >= k.traits.blocks_per_launch()) return blocks;
    }
    return 1;
}

// A cluster larger than the portable 8 blocks is allowed (where the device has it); then how many
// clusters of the kernel are resident at once (the driver places a cluster on the SMs of one GPC),
// against what the launch has (cluster_residency_problem, fused_tiling.cpp).
std::optional<LaunchProblem> cluster_problem(const LoadedKernel& k, FusedCluster asked) {
    const FusedKernelTraits& t = k.traits;
    if (t.row_blocks > 8)
        cuda::check(cudaFuncSetAttribute(reinterpret_cast<const void*>(k.kernel),
                                         cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
                    "cudaFuncSetAttribute (non-portable cluster size)");
    LaunchAttributes attributes;
    const cudaLaunchConfig_t config = launch_config(k, attributes);
    int clusters = 0;
    cuda::check(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(k.kernel), &config),
                "cudaOccupancyMaxActiveClusters");
    if (const std::optional<std::string> problem = cluster_residency_problem(t, clusters, asked))
        return LaunchProblem{*problem};
    return std::nullopt;
}

// What keeps a loaded kernel with these attributes from running as configured (nothing when it can).
std::optional<LaunchProblem> launch_problem(const LoadedKernel& k, const cudaFuncAttributes& attributes,
                                            const DeviceLimits& limits, FusedCluster asked) {
    const FusedKernelTraits& t = k.traits;
    if (attributes.localSizeBytes > 0)
        return LaunchProblem{std::to_string(attributes.localSizeBytes) +
                             " bytes of local memory per thread (spills) with " +
                             std::to_string(attributes.numRegs) + " registers"};
    if (attributes.maxThreadsPerBlock < t.threads_per_block)
        return LaunchProblem{std::to_string(attributes.numRegs) + " registers per thread allow " +
                             std::to_string(attributes.maxThreadsPerBlock) + " threads per block, not " +
                             std::to_string(t.threads_per_block)};
    const long long static_bytes = static_cast<long long>(attributes.sharedSizeBytes);
    if (k.shared_bytes + static_bytes > limits.shared_memory_per_block_optin)
        return LaunchProblem{std::to_string(k.shared_bytes) + " bytes of shared memory per block beside " +
                                 std::to_string(static_bytes) + " static",
                             FusedResource::shared_memory,
                             limits.shared_memory_per_block_optin - static_bytes + 1};
    int resident = 0;
    cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &resident, reinterpret_cast<const void*>(k.kernel), t.threads_per_block,
                    static_cast<std::size_t>(k.shared_bytes)),
                "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (t.cluster_exchange) return cluster_problem(k, asked);
    // A cooperative launch needs every block resident at once: as many per SM as the grid asks.
    const int needed = t.cooperative ? (t.blocks_per_launch() + limits.sm_count - 1) / limits.sm_count : 1;
    if (resident >= needed) return std::nullopt;
    const std::string text = resident < 1
                                 ? std::string("no block of it fits on an SM")
                                 : std::to_string(t.blocks_per_launch()) + " cooperative blocks, but only " +
                                       std::to_string(resident * limits.sm_count) + " are resident at once";
    if (const auto short_of = shared_memory_short(k, needed))
        return LaunchProblem{text + " (" + std::to_string(k.shared_bytes) +
                                 " bytes of shared memory per block)",
                             FusedResource::shared_memory, *short_of};
    return LaunchProblem{text + " (" + std::to_string(attributes.numRegs) + " registers per thread)"};
}

// Asks for the kernel's dynamic shared memory. cudaFuncSetAttribute refuses more than a block may have
// beside the kernel's static shared memory (cudaErrorInvalidValue): then the kernel cannot run.
std::optional<LaunchProblem> set_shared_memory(const LoadedKernel& k, const cudaFuncAttributes& attributes,
                                               const DeviceLimits& limits) {
    const cudaError_t status =
        cudaFuncSetAttribute(reinterpret_cast<const void*>(k.kernel),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(k.shared_bytes));
    if (status != cudaErrorInvalidValue) {
        cuda::check(status, "cudaFuncSetAttribute (dynamic shared memory)");
        return std::nullopt;
    }
    (void)cudaGetLastError(); // the refusal is not sticky: cleared, so that no later check reports it
    const long long static_bytes = static_cast<long long>(attributes.sharedSizeBytes);
    return LaunchProblem{
        "cudaFuncSetAttribute refused " + std::to_string(k.shared_bytes) +
            " bytes of dynamic shared memory per block (" + std::to_string(static_bytes) + " static)",
        FusedResource::shared_memory,
        std::max(1LL, std::min(k.shared_bytes, limits.shared_memory_per_block_optin - static_bytes + 1))};
}

// Solves, compiles and loads; a configuration that spills or cannot launch goes back to the model
// as feedback on the resource it ran short of (the paper's Fig. 5) and the model is solved again
// (run_fused_compile_loop, the loop of `flashrnn tune --compile yes` with the driver's checks here).
LoadedKernel load_kernel(Cell cell, const ProblemShape& p, DType dtype, FusedPass pass,
                         const TilingLimits& tuning) {
    const DeviceLimits& limits = cuda::limits_of_current_device();
    FusedTilingRequest request = limited(fused_tiling_request(pass, cell, dtype, p), tuning);
    LoadedKernel loaded;
    const auto runs = [&](const FusedKernelTraits& traits, const CompiledKernel& compiled,
                          const FusedTilingRequest& solved) -> std::optional<FusedCompileFeedback> {
        LoadedKernel k;
        k.traits = traits;
        k.shared_bytes = shared_layout(k.traits, k.traits.pass == FusedPass::forward).total;
        cudaLibrary_t library = nullptr;
        cuda::check(
            cudaLibraryLoadData(&library, compiled.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
            "cudaLibraryLoadData (fused kernel)");
        cuda::check(cudaLibraryGetKernel(&k.kernel, library, compiled.lowered_name.c_str()),
                    "cudaLibraryGetKernel");
        cudaFuncAttributes attributes{};
        cuda::check(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(k.kernel)),
                    "cudaFuncGetAttributes");
        std::optional<LaunchProblem> problem = set_shared_memory(k, attributes, limits);
        if (!problem) problem = launch_problem(k, attributes, limits, solved.cluster);
        if (!problem) { // the library stays loaded: kernels are cached for the process
            if (k.traits.multicast_gather) k.cluster_blocks = multicast_cluster_blocks(k);
            loaded = k;
            return std::nullopt;
        }
        const std::int64_t local_bytes = static_cast<std::int64_t>(attributes.localSizeBytes);
        cudaLibraryUnload(library);
        if (problem->resource == FusedResource::shared_memory) // less shared memory per block
            return FusedCompileFeedback{
                problem->text,
                with_feedback(solved, shared_memory_feedback(k.traits, problem->shared_memory_bytes))};
        // Registers (or a cluster that does not fit): after_register_shortage says what to ask next.
        return FusedCompileFeedback{
            problem->text, after_register_shortage(solved, k.traits, attributes.numRegs, local_bytes)};
    };
    const FusedCompileOutcome outcome =
        run_fused_compile_loop(limits, request, fused_compile_options(), runs);
    if (outcome.refusal) throw *outcome.refusal;
    if (!loaded.kernel) {
        std::string history = outcome.result.history;
        if (!history.empty()) history.pop_back(); // the last line's newline
        throw TilingError("flashrnn::fused: no configuration of the " + std::string(to_string(pass)) +
                          " kernel could run after " + std::to_string(outcome.result.attempts) +
                          " attempts:\n" + history);
    }
    return loaded;
}

LoadedKernel kernel_for(Cell cell, const ProblemShape& p, DType dtype, FusedPass pass) {
    static tiling::Memo<
        std::tuple<int, Cell, std::int64_t, std::int64_t, std::int64_t, DType, FusedPass, TilingLimits>,
        LoadedKernel>
        kernels;
    const TilingLimits tuning = tiling_limits();
    const auto key =
        std::make_tuple(cuda::current_device(), cell, p.heads, p.head_dim, p.batch, dtype, pass, tuning);
    return kernels.get(key, [&] { return load_kernel(cell, p, dtype, pass, tuning); });
}

// The launches of each group of heads: one per chunk of the blocks' batch, or one for all of them
// when they run inside each step.
int launches_per_heads(const FusedKernelTraits& t) {
    return t.chunks_in_step ? 1 : t.batch_chunks;
}

// The step exchange's words of every group of every launch (none when no head is split).
std::int64_t exchange_words(const FusedKernelTraits& t) {
    if (!t.cooperative) return 0;
    return static_cast<std::int64_t>(t.launches) * launches_per_heads(t) * t.heads_per_launch *
           t.batch_blocks * exchange_words_per_group(t);
}

unsigned long long* plan_forward(WorkspacePlan& plan, const FusedKernelTraits& t) {
    return static_cast<unsigned long long*>(plan.take(exchange_words(t), sizeof(unsigned long long)));
}

struct BackwardWorkspace {
    unsigned long long* exchange;
    void* d_gates; // [T, B, NH, G, DH] in dtype, slot order
    alternating::ParameterGradientWorkspace parameters;
};

BackwardWorkspace plan_backward(WorkspacePlan& plan, Cell cell, const ProblemShape& p, DType dtype,
                                const FusedKernelTraits& t) {
    BackwardWorkspace w;
    w.exchange = static_cast<unsigned long long*>(plan.take(exchange_words(t), sizeof(unsigned long long)));
    w.d_gates =
        plan.take(p.time_steps * p.batch * p.heads * p.head_dim * cell_info(cell).num_gates, bytes_of(dtype));
    w.parameters = alternating::plan_parameter_gradients(plan, cell, p);
    return w;
}

// The tensors' layouts as the kernels index them (the same functions as the alternating backend).
TensorLayouts layouts_of(Cell cell, const ProblemShape& p) {
    const CellInfo info = cell_info(cell);
    return {gate_inputs_layout(info, p),    recurrent_weights_layout(info, p),
            bias_layout(info, p),           states_layout(info, p),
            state_sequence_layout(info, p), {p.batch, p.heads, info.num_gates, p.head_dim}};
}

// One launch per group of heads (traits.launches) and chunk of the blocks' batch (traits.batch_chunks,
// one after the other in the stream; one for all chunks inside each step); each launch's step exchange is its
// own, zeroed first (its words carry exchange numbers from 1).
template <class Params>
void launch_all(const LoadedKernel& k, Params params, unsigned long long* exchange, Stream stream) {
    const FusedKernelTraits& t = k.traits;
    if (t.cooperative)
        cuda::check(cudaMemsetAsync(exchange, 0, exchange_words(t) * sizeof(unsigned long long), stream),
                    "cudaMemsetAsync (step exchange)");
    const int chunk_launches = launches_per_heads(t);
    for (int launch = 0; launch < t.launches * chunk_launches; ++launch) {
        params.head_offset = launch / chunk_launches * t.heads_per_launch;
        params.batch_chunk = launch % chunk_launches;
        params.exchange = exchange + launch * k.traits.groups_per_launch() * exchange_words_per_group(t);
        LaunchAttributes attributes;
        cudaLaunchConfig_t config = launch_config(k, attributes);
        config.stream = stream;
        void* arguments[] = {&params};
        cuda::check(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k.kernel), arguments),
                    "cudaLaunchKernelExC (fused kernel)");
    }
}

} // namespace

FusedKernelTraits traits(const rnn::Problem& problem, FusedPass pass) {
    validate(problem.shape);
    return kernel_for(problem.cell, problem.shape, problem.dtype, pass).traits;
}

void prepare(const rnn::Problem& problem) {
    validate(problem.shape);
    kernel_for(problem.cell, problem.shape, problem.dtype, FusedPass::forward);
    kernel_for(problem.cell, problem.shape, problem.dtype, FusedPass::backward);
}

// The cost model (automatic_backend.hpp) on the kernel compiled for the pass, after the compiler's
// feedback: at (1, 768) LSTM bf16 on the H100 the model runs the B = 64 backward in one chunk, the
// compiled kernel in 2. The answer is remembered (a refused problem would otherwise be solved and
// compiled again on every call).
rnn::AutomaticChoice automatic_choice(const rnn::Problem& problem, FusedPass pass) {
    static tiling::Memo<
        std::tuple<int, Cell, std::int64_t, std::int64_t, std::int64_t, DType, FusedPass, TilingLimits>,
        rnn::AutomaticChoice>
        answers;
    const ProblemShape& p = problem.shape;
    const auto key = std::make_tuple(cuda::current_device(), problem.cell, p.heads, p.head_dim, p.batch,
                                     problem.dtype, pass, tiling_limits());
    return answers.get(key, [&] {
        const int sm_count = cuda::limits_of_current_device().sm_count;
        try {
            return rnn::automatic_choice(pass, p.batch, sm_count,
                                         kernel_for(problem.cell, p, problem.dtype, pass).traits);
        } catch (const TilingError& e) {
            return rnn::automatic_choice(pass, p.batch, sm_count, std::nullopt, e.what());
        }
    });
}

std::size_t forward_workspace_bytes(const rnn::Problem& problem) {
    WorkspacePlan plan;
    plan_forward(plan, kernel_for(problem.cell, problem.shape, problem.dtype, FusedPass::forward).traits);
    return plan.size();
}

std::size_t backward_workspace_bytes(const rnn::Problem& problem) {
    WorkspacePlan plan;
    plan_backward(plan, problem.cell, problem.shape, problem.dtype,
                  kernel_for(problem.cell, problem.shape, problem.dtype, FusedPass::backward).traits);
    return plan.size();
}

// The arguments and the workspace were checked by rnn::forward (passes.cpp).
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream) {
    const ProblemShape& p = problem.shape;
    const LoadedKernel k = kernel_for(problem.cell, p, problem.dtype, FusedPass::forward);
    WorkspacePlan plan(args.workspace.data);
    unsigned long long* exchange = plan_forward(plan, k.traits);
    const ForwardParams params{layouts_of(problem.cell, p),
                               args.gate_inputs.data,
                               args.recurrent_weights.data,
                               args.bias.data,
                               args.initial_states.data,
                               args.states.data,
                               args.last_state.data,
                               static_cast<float*>(args.gate_cache.data),
                               nullptr,
                               0,
                               0};
    launch_all(k, params, exchange, stream);
}

// The arguments and the workspace were checked by rnn::backward (passes.cpp).
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream) {
    const Cell cell = problem.cell;
    const ProblemShape& p = problem.shape;
    const DType dtype = problem.dtype;
    const LoadedKernel k = kernel_for(cell, p, dtype, FusedPass::backward);
    WorkspacePlan plan(args.workspace.data);
    const BackwardWorkspace w = plan_backward(plan, cell, p, dtype, k.traits);
    const BackwardParams params{
        layouts_of(cell, p),
        args.recurrent_weights.data,
        args.states.data,
        static_cast<const float*>(args.gate_cache.data),
        args.d_states.data,
        args.d_last_state.data,
        args.d_gate_inputs.data,
        w.d_gates,
        args.d_initial_states.data,
        nullptr,
        0,
        0,
        {policy.mode == RecurrentGradient::Mode::clipped, static_cast<float>(policy.clip_value)},
        policy.mode == RecurrentGradient::Mode::cut ? 1 : 0};
    launch_all(k, params, w.exchange, stream);
    alternating::parameter_gradients(cell, p, dtype, w.d_gates, args.states.data, w.parameters,
                                     args.d_recurrent_weights.data, args.d_bias.data, stream);
}

} // namespace flashrnn::fused

// The alternating backend's host side: argument checks, the workspace, the launch configuration
// (ConstrINT's pointwise model, solved once per device and problem) and the time loops, launched
// directly or replayed from a kept graph (graph_reuse.hpp).
#include "flashrnn/rnn/alternating.hpp"
#include "rnn/backends.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include "cuda/alternating/graph_reuse.hpp"
#include "cuda/alternating/step_launch.hpp"
#include "cuda/common/cublas_handle.hpp"
#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/rnn/auxiliary_kernels.hpp"
#include "cuda/rnn/parameter_gradients.hpp"
#include "cuda/rnn/recurrent_products.hpp"
#include "cuda/rnn/workspace.hpp"
#include "flashrnn/core/host_tensor.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
#include "tiling/memo.hpp"
#include "tiling/pointwise_launch.hpp"

namespace flashrnn::alternating {
namespace {

std::int64_t units_per_step(const ProblemShape& p) {
    return p.batch * p.heads * p.head_dim;
}

HeadProductShape product_shape(const CellInfo& info, const ProblemShape& p) {
    return {p.batch, p.heads, info.num_recurrent_gates, info.num_gates, p.head_dim};
}

struct ForwardWorkspace {
    void* weights_head_major;
    float* recurrent; // [B, NH, G_rec, DH]
};

ForwardWorkspace plan_forward(WorkspacePlan& plan, const CellInfo& info, const ProblemShape& p, DType dtype) {
    ForwardWorkspace w;
    w.weights_head_major =
        plan.take(info.num_recurrent_gates * p.heads * p.head_dim * p.head_dim, bytes_of(dtype));
    w.recurrent = plan.take<float>(units_per_step(p) * info.num_recurrent_gates);
    return w;
}

struct BackwardWorkspace {
    void* weights_head_major;
    void* d_gates;    // [T, B, NH, G, DH] in dtype, slot order
    float* carry;     // [S, B, NH, DH]
    float* through_r; // [B, NH, parts, DH]
    ParameterGradientWorkspace parameters;
};

BackwardWorkspace plan_backward(WorkspacePlan& plan, Cell cell, const ProblemShape& p, DType dtype) {
    const CellInfo info = cell_info(cell);
    BackwardWorkspace w;
    w.weights_head_major =
        plan.take(info.num_recurrent_gates * p.heads * p.head_dim * p.head_dim, bytes_of(dtype));
    w.d_gates = plan.take(p.time_steps * units_per_step(p) * info.num_gates, bytes_of(dtype));
    w.carry = plan.take<float>(info.num_states * units_per_step(p));
    w.through_r = plan.take<float>(units_per_step(p) * state_gradient_parts(product_shape(info, p)));
    w.parameters = plan_parameter_gradients(plan, cell, p);
    return w;
}

// The step kernels are bound by latency, not bandwidth: B x NH x DH units (12288 at B = 16 and
// NH x DH = 768) are few, so each thread evaluates the cell for one unit with scalar accesses, the
// most threads with the least work each. 16-byte vectors (8 bf16 units per thread, one warp on each of
// 48 SMs) made a forward 6.7 ms at that size (T = 1024, graph replay, H100), scalar accesses 4.7 to
// 5.3 ms (two leases; docs/benchmarks.md). The ConstrINT solve takes a fraction of a millisecond; a
// training loop calls with the same sizes thousands of times, so each (device, problem) is solved once.
PointwiseLaunch launch_for(Cell cell, const ProblemShape& p, DType dtype) {
    static tiling::Memo<std::tuple<int, Cell, std::int64_t, std::int64_t, DType>, PointwiseLaunch> launches;
    const int device = cuda::current_device();
    const auto key = std::make_tuple(device, cell, units_per_step(p), p.head_dim, dtype);
    return launches.get(key, [&] {
        return choose_pointwise_launch(cuda::limits_of_current_device(),
                                       {units_per_step(p), static_cast<int>(p.head_dim), bytes_of(dtype),
                                        bytes_of(dtype), step_kernels_max_threads(cell, dtype)});
    });
}

enum class Pass { forward, backward };

PassKey pass_key(Pass pass, Cell cell, DType dtype, const ProblemShape& p, const RecurrentGradient& policy) {
    return {static_cast<std::int64_t>(pass),
            static_cast<std::int64_t>(cell),
            static_cast<std::int64_t>(dtype),
            p.time_steps,
            p.batch,
            p.heads,
            p.head_dim,
            static_cast<std::int64_t>(p.gate_input_layout),
            static_cast<std::int64_t>(policy.mode),
            std::bit_cast<std::int64_t>(policy.clip_value)};
}

UnitGrid unit_grid(const ProblemShape& p, const PointwiseLaunch& launch) {
    return {p.batch, p.heads, p.head_dim, units_per_step(p) / launch.vector_width,
            launch.elements_per_thread / launch.vector_width};
}

// The address of element `elements` of a dtype buffer.
const std::byte* at(const void* base, std::int64_t elements, DType dtype) {
    return static_cast<const std::byte*>(base) + elements * bytes_of(dtype);
}
std::byte* at(void* base, std::int64_t elements, DType dtype) {
    return static_cast<std::byte*>(base) + elements * bytes_of(dtype);
}

// A pass's tensors as the buffers of graph_reuse.hpp (the backend's tensors are dense).
std::size_t bytes_of_view(const ConstTensorView& view) {
    return view.present() ? static_cast<std::size_t>(view.elements()) * bytes_of(view.dtype) : 0;
}
PassBuffer input(const ConstTensorView& view) {
    return {const_cast<void*>(view.data), bytes_of_view(view), PassBuffer::Use::input};
}
PassBuffer output(const TensorView& view) {
    return {view.data, bytes_of_view(view), PassBuffer::Use::output};
}
PassBuffer scratch(const Workspace& workspace) {
    return {workspace.data, workspace.bytes, PassBuffer::Use::scratch};
}

// Where each tensor is in a pass's PassBuffers.
enum ForwardBuffer : std::size_t {
    fw_gate_inputs,
    fw_recurrent_weights,
    fw_bias,
    fw_initial_states,
    fw_states,
    fw_last_state,
    fw_gate_cache,
    fw_workspace
};
enum BackwardBuffer : std::size_t {
    bw_recurrent_weights,
    bw_states,
    bw_gate_cache,
    bw_d_states,
    bw_d_last_state,
    bw_d_gate_inputs,
    bw_d_recurrent_weights,
    bw_d_bias,
    bw_d_initial_states,
    bw_workspace
};

} // namespace

std::size_t forward_workspace_bytes(const rnn::Problem& problem) {
    WorkspacePlan plan;
    plan_forward(plan, cell_info(problem.cell), problem.shape, problem.dtype);
    return plan.size();
}

std::size_t backward_workspace_bytes(const rnn::Problem& problem) {
    WorkspacePlan plan;
    plan_backward(plan, problem.cell, problem.shape, problem.dtype);
    return plan.size();
}

// The arguments were checked by rnn::forward (passes.cpp).
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream) {
    const Cell cell = problem.cell;
    const ProblemShape& p = problem.shape;
    const DType dtype = problem.dtype;
    const CellInfo info = cell_info(cell);
    const PointwiseLaunch launch = launch_for(cell, p, dtype);
    const StateSequenceLayout sequence = state_sequence_layout(info, p);

    // Everything below only launches, over the call's buffers or a staged graph's (graph_reuse.hpp).
    auto enqueue = [&](Stream s, const PassBuffers& b) {
        WorkspacePlan plan(b[fw_workspace].data);
        const ForwardWorkspace w = plan_forward(plan, info, p, dtype);
        void* states = b[fw_states].data;
        // The initial states are states[:, 0]: one copy per state of [B, NH, DH].
        for (int state = 0; state < info.num_states; ++state)
            cuda::check(cudaMemcpyAsync(at(states, sequence.offset(state, 0, 0, 0, 0), dtype),
                                        at(b[fw_initial_states].data, state * units_per_step(p), dtype),
                                        static_cast<std::size_t>(units_per_step(p) * bytes_of(dtype)),
                                        cudaMemcpyDeviceToDevice, s),
                        "cudaMemcpyAsync (initial states)");
        reorder_weights_head_major(dtype, {info.num_recurrent_gates, p.heads, p.head_dim},
                                   b[fw_recurrent_weights].data, w.weights_head_major, s);

        cublasHandle_t handle = cuda::cublas_for(s);
        ForwardStep step{unit_grid(p, launch),
                         gate_inputs_layout(info, p),
                         bias_layout(info, p),
                         sequence,
                         states_layout(info, p),
                         0,
                         b[fw_gate_inputs].data,
                         b[fw_bias].data,
                         w.recurrent,
                         states,
                         b[fw_last_state].data,
                         static_cast<float*>(b[fw_gate_cache].data)};
        for (std::int64_t t = 0; t < p.time_steps; ++t) {
            recurrent_products(handle, dtype, product_shape(info, p), w.weights_head_major,
                               at(states, sequence.offset(0, t, 0, 0, 0), dtype), w.recurrent);
            step.t = t;
            launch_forward_step(cell, dtype, launch, step, s);
        }
    };
    PassBuffers buffers{};
    buffers[fw_gate_inputs] = input(args.gate_inputs);
    buffers[fw_recurrent_weights] = input(args.recurrent_weights);
    buffers[fw_bias] = input(args.bias);
    buffers[fw_initial_states] = input(args.initial_states);
    buffers[fw_states] = output(args.states);
    buffers[fw_last_state] = output(args.last_state);
    buffers[fw_gate_cache] = output(args.gate_cache);
    buffers[fw_workspace] = scratch(args.workspace);
    run_pass(pass_key(Pass::forward, cell, dtype, p, RecurrentGradient::full()), buffers, stream, enqueue);
}

// The arguments were checked by rnn::backward (passes.cpp).
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream) {
    const Cell cell = problem.cell;
    const ProblemShape& p = problem.shape;
    const DType dtype = problem.dtype;
    const CellInfo info = cell_info(cell);
    const PointwiseLaunch launch = launch_for(cell, p, dtype);
    const bool cut = policy.mode == RecurrentGradient::Mode::cut;
    const RecurrentGradientPolicy device_policy{policy.mode == RecurrentGradient::Mode::clipped,
                                                static_cast<float>(policy.clip_value)};
    const HeadProductShape products = product_shape(info, p);
    const std::int64_t gates_per_step = units_per_step(p) * info.num_gates;

    // Everything below only launches, over the call's buffers or a staged graph's (graph_reuse.hpp).
    auto enqueue = [&](Stream s, const PassBuffers& b) {
        WorkspacePlan plan(b[bw_workspace].data);
        const BackwardWorkspace w = plan_backward(plan, cell, p, dtype);
        reorder_weights_head_major(dtype, {info.num_recurrent_gates, p.heads, p.head_dim},
                                   b[bw_recurrent_weights].data, w.weights_head_major, s);
        cublasHandle_t handle = cuda::cublas_for(s);
        BackwardStep step{unit_grid(p, launch),
                          gate_inputs_layout(info, p),
                          state_sequence_layout(info, p),
                          states_layout(info, p),
                          p.time_steps,
                          b[bw_states].data,
                          static_cast<const float*>(b[bw_gate_cache].data),
                          b[bw_d_states].data,
                          b[bw_d_last_state].data,
                          nullptr,
                          state_gradient_parts(products),
                          device_policy,
                          w.carry,
                          b[bw_d_gate_inputs].data,
                          w.d_gates};
        for (std::int64_t t = p.time_steps; t >= 1; --t) {
            step.t = t;
            step.through_r = t < p.time_steps && !cut ? w.through_r : nullptr;
            launch_backward_step(cell, dtype, launch, step, s);
            if (!cut)
                state_gradient_products(handle, dtype, products, w.weights_head_major,
                                        at(w.d_gates, (t - 1) * gates_per_step, dtype), w.through_r);
        }
        launch_initial_states_gradient(dtype,
                                       {{p.batch, p.heads, p.head_dim, units_per_step(p), 1},
                                        state_sequence_layout(info, p),
                                        states_layout(info, p),
                                        info.num_states,
                                        w.carry,
                                        cut ? nullptr : w.through_r,
                                        state_gradient_parts(products),
                                        device_policy,
                                        b[bw_d_states].data,
                                        b[bw_d_initial_states].data},
                                       s);

        parameter_gradients(cell, p, dtype, w.d_gates, b[bw_states].data, w.parameters,
                            b[bw_d_recurrent_weights].data, b[bw_d_bias].data, s);
    };
    PassBuffers buffers{};
    buffers[bw_recurrent_weights] = input(args.recurrent_weights);
    buffers[bw_states] = input(args.states);
    buffers[bw_gate_cache] = input(args.gate_cache);
    buffers[bw_d_states] = input(args.d_states);
    buffers[bw_d_last_state] = input(args.d_last_state);
    buffers[bw_d_gate_inputs] = output(args.d_gate_inputs);
    buffers[bw_d_recurrent_weights] = output(args.d_recurrent_weights);
    buffers[bw_d_bias] = output(args.d_bias);
    buffers[bw_d_initial_states] = output(args.d_initial_states);
    buffers[bw_workspace] = scratch(args.workspace);
    run_pass(pass_key(Pass::backward, cell, dtype, p, policy), buffers, stream, enqueue);
}

} // namespace flashrnn::alternating

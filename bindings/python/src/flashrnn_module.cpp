// The `flashrnn._core` extension: FlashRNN's C++ API over raw addresses, sizes, dtypes and CUDA stream
// handles (Python integers), so that it links against no framework. The package's torch ops (flashrnn/
// _ops.py) pass their tensors' data_ptr(), shape and stride() here.
//
// Two families of calls:
//   reference_*: the CPU float64 reference on dense host buffers (the CPU path of the ops);
//   rnn_* / linrec_* / rglru_* / newton_*: the CUDA library on device tensor views, on the given device
//   and stream.
// Every FlashRNN error becomes a Python exception of the same name (flashrnn.ShapeError, ...) with the
// C++ message, which names the call and the tensor. The GIL is released while C++ runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <flashrnn/flashrnn.hpp>

#if FLASHRNN_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace py = pybind11;
using namespace flashrnn;

namespace {

// A device tensor as Python passes it: (data_ptr, dtype name, sizes, strides in elements).
using DeviceTensor =
    std::tuple<std::uintptr_t, std::string, std::vector<std::int64_t>, std::vector<std::int64_t>>;
// A dense float64 host tensor: (data_ptr, sizes).
using HostTensor = std::tuple<std::uintptr_t, std::vector<std::int64_t>>;

DType dtype_of(const std::string& call, const char* tensor, const std::string& name) {
    if (name == "fp32") return DType::fp32;
    if (name == "bf16") return DType::bf16;
    if (name == "fp16") return DType::fp16;
    throw ShapeError(call + ": " + tensor + ": dtype " + name +
                     " is not one FlashRNN stores (fp32, bf16, fp16)");
}

template <class View>
View device_view(const std::string& call, const char* tensor, const std::optional<DeviceTensor>& arg) {
    if (!arg) return {};
    const auto& [data, dtype, sizes, strides] = *arg;
    using Pointer = decltype(View::data);
    return View{reinterpret_cast<Pointer>(data), dtype_of(call, tensor, dtype), Extents(sizes),
                Extents(strides)};
}

template <class Scalar> HostView<Scalar> host_view(const HostTensor& arg) {
    const auto& [data, sizes] = arg;
    std::size_t elements = 1;
    for (std::int64_t size : sizes)
        elements *= static_cast<std::size_t>(size < 0 ? 0 : size);
    return {std::span<Scalar>(reinterpret_cast<Scalar*>(data), elements), sizes};
}

std::optional<ConstHostView> optional_host_view(const std::optional<HostTensor>& arg) {
    if (!arg) return std::nullopt;
    return host_view<const double>(*arg);
}

ProblemShape problem_shape(const std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>& sizes,
                           bool batch_first) {
    const auto [time_steps, batch, heads, head_dim] = sizes;
    return {time_steps, batch, heads, head_dim,
            batch_first ? SequenceLayout::batch_first : SequenceLayout::time_major};
}

RecurrentGradient recurrent_gradient(const std::string& mode, double clip_value) {
    if (mode == "full") return RecurrentGradient::full();
    if (mode == "cut") return RecurrentGradient::cut();
    if (mode == "clipped") return RecurrentGradient::clipped(clip_value);
    throw UnsupportedError("flashrnn: recurrent_gradient must be 'full', 'clipped' or 'cut', got '" + mode +
                           "'");
}

// Makes `device` current for the call and restores the previous device after it. The guard is here,
// in the library's own CUDA runtime, because the caller's framework may hold another copy of it
// whose current device does not reach this one.
class DeviceGuard {
  public:
    explicit DeviceGuard([[maybe_unused]] int device) {
#if FLASHRNN_WITH_CUDA
        check(cudaGetDevice(&previous_), "cudaGetDevice");
        if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
        device_ = device;
#endif
    }
    ~DeviceGuard() {
#if FLASHRNN_WITH_CUDA
        if (previous_ != device_) cudaSetDevice(previous_);
#endif
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

  private:
#if FLASHRNN_WITH_CUDA
    static void check(cudaError_t status, const char* call) {
        if (status != cudaSuccess)
            throw DeviceError(std::string("flashrnn: ") + call + " failed: " + cudaGetErrorString(status));
    }
    int previous_ = 0;
    int device_ = 0;
#endif
};

Stream stream_of(std::uintptr_t handle) {
    return reinterpret_cast<Stream>(handle);
}

rnn::Problem rnn_problem(const std::string& call, const char* tensor, const std::string& cell,
                         const std::string& dtype,
                         const std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>& sizes,
                         bool batch_first) {
    return {parse_cell(cell), dtype_of(call, tensor, dtype), problem_shape(sizes, batch_first)};
}

rnn::Options rnn_options(const std::string& backend, const std::string& mode = "full",
                         double clip_value = 0) {
    return {rnn::parse_backend(backend), recurrent_gradient(mode, clip_value)};
}

using Sizes = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
using OptionalDeviceTensor = std::optional<DeviceTensor>;
using OptionalHostTensor = std::optional<HostTensor>;

// linrec's problem: the dtype and [sequences, L] of its output `y` (the call checks every tensor
// against them).
linrec::Problem linrec_problem(const std::string& call, const DeviceTensor& y, bool reverse) {
    const auto& sizes = std::get<2>(y);
    return {dtype_of(call, "y", std::get<1>(y)),
            {sizes.size() > 0 ? sizes[0] : 0, sizes.size() > 1 ? sizes[1] : 0},
            reverse};
}

void bind_reference(py::module_& m) {
    m.def(
        "reference_rnn_forward",
        [](const std::string& cell, const Sizes& sizes, bool batch_first, const HostTensor& gate_inputs,
           const HostTensor& recurrent_weights, const HostTensor& bias, const HostTensor& initial_states,
           const HostTensor& states, const HostTensor& last_state) {
            py::gil_scoped_release release;
            reference::forward(parse_cell(cell), problem_shape(sizes, batch_first),
                               {host_view<const double>(gate_inputs),
                                host_view<const double>(recurrent_weights), host_view<const double>(bias),
                                host_view<const double>(initial_states)},
                               {host_view<double>(states), host_view<double>(last_state)});
        },
        "The CPU float64 reference forward into `states` and `last_state` (dense float64 host tensors).");
    m.def(
        "reference_rnn_backward",
        [](const std::string& cell, const Sizes& sizes, bool batch_first, const HostTensor& gate_inputs,
           const HostTensor& recurrent_weights, const HostTensor& bias, const HostTensor& states,
           const OptionalHostTensor& d_states, const OptionalHostTensor& d_last_state,
           const HostTensor& d_gate_inputs, const HostTensor& d_recurrent_weights, const HostTensor& d_bias,
           const HostTensor& d_initial_states, const std::string& mode, double clip_value) {
            const RecurrentGradient policy = recurrent_gradient(mode, clip_value);
            py::gil_scoped_release release;
            reference::backward(parse_cell(cell), problem_shape(sizes, batch_first),
                                {host_view<const double>(gate_inputs),
                                 host_view<const double>(recurrent_weights), host_view<const double>(bias),
                                 host_view<const double>(states), optional_host_view(d_states),
                                 optional_host_view(d_last_state)},
                                {host_view<double>(d_gate_inputs), host_view<double>(d_recurrent_weights),
                                 host_view<double>(d_bias), host_view<double>(d_initial_states)},
                                policy);
        },
        "The CPU float64 reference backward (BPTT) into the four gradient tensors.");
    // linrec's reference works on dense [sequences, L] rows; it returns vectors, copied into the outputs.
    m.def(
        "reference_linrec_forward",
        [](const HostTensor& x, const HostTensor& c, const HostTensor& y, bool reverse) {
            const auto& sizes = std::get<1>(y);
            if (sizes.size() != 2)
                throw ShapeError("flashrnn::reference::linrec_forward: y must be [sequences, L], got " +
                                 to_string(Extents(sizes)));
            py::gil_scoped_release release;
            const std::vector<double> result =
                reference::linrec_forward(host_view<const double>(x).values,
                                          host_view<const double>(c).values, {sizes[0], sizes[1]}, reverse);
            std::ranges::copy(result, host_view<double>(y).values.begin());
        },
        "The CPU float64 reference of linrec's forward into `y`.");
    m.def(
        "reference_linrec_backward",
        [](const HostTensor& dy, const HostTensor& c, const HostTensor& y, const HostTensor& dx,
           const HostTensor& dc, bool reverse) {
            const auto& sizes = std::get<1>(dx);
            if (sizes.size() != 2)
                throw ShapeError("flashrnn::reference::linrec_backward: dx must be [sequences, L], got " +
                                 to_string(Extents(sizes)));
            py::gil_scoped_release release;
            const reference::LinrecGradients result = reference::linrec_backward(
                host_view<const double>(dy).values, host_view<const double>(c).values,
                host_view<const double>(y).values, {sizes[0], sizes[1]}, reverse);
            std::ranges::copy(result.dx, host_view<double>(dx).values.begin());
            std::ranges::copy(result.dc, host_view<double>(dc).values.begin());
        },
        "The CPU float64 reference of linrec's backward into `dx` and `dc`.");
}

// The RG-LRU's reference works on dense rows [B*R, L] (lambda [R], states [B*R]); it returns vectors,
// copied into the outputs. Empty h0 / dh_last: zero.
void copy_into(const std::string& call, const char* tensor, const std::vector<double>& values,
               const HostTensor& out) {
    HostView<double> view = host_view<double>(out);
    if (view.values.size() != values.size())
        throw ShapeError(call + ": " + tensor + " holds " + std::to_string(view.values.size()) +
                         " values, the result has " + std::to_string(values.size()));
    std::ranges::copy(values, view.values.begin());
}

std::span<const double> optional_values(const OptionalHostTensor& arg) {
    if (!arg) return {};
    return host_view<const double>(*arg).values;
}

RglruShape rglru_shape(const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes) {
    const auto [batch, channels, length] = sizes;
    return {batch, channels, length};
}

newton::Shape newton_shape(const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes) {
    const auto [time_steps, batch, units] = sizes;
    return {time_steps, batch, units};
}

// Newton's options from Python: a tolerance of (0, 0) is none.
newton::Options newton_options(const std::string& backend, int max_iterations, double absolute,
                               double relative) {
    newton::Options options;
    options.backend = newton::parse_backend(backend);
    options.max_iterations = max_iterations;
    if (absolute != 0 || relative != 0) options.tolerance = newton::Tolerance{absolute, relative};
    return options;
}

newton::Problem newton_problem(const std::string& call, const std::string& cell, const std::string& dtype,
                               const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes) {
    return {newton::parse_cell(cell), dtype_of(call, "inputs", dtype), newton_shape(sizes)};
}

newton::JacobianStructure jacobian_structure(const std::string& name) {
    if (name == "diagonal") return newton::JacobianStructure::diagonal;
    if (name == "2x2") return newton::JacobianStructure::block2x2;
    throw UnsupportedError("flashrnn::newton::reduce: structure must be 'diagonal' or '2x2', got '" + name +
                           "'");
}

// The reduction's problem: the dtype and [N, sequences, L] of its right-hand side `rhs` (the call checks
// every tensor against them).
newton::ReductionProblem reduction_problem(const std::string& call, const std::string& structure,
                                           const DeviceTensor& rhs, bool reverse) {
    const auto& sizes = std::get<2>(rhs);
    return {dtype_of(call, "rhs", std::get<1>(rhs)),
            jacobian_structure(structure),
            {sizes.size() == 3 ? sizes[1] : 0, sizes.size() == 3 ? sizes[2] : 0},
            reverse};
}

void bind_scan_and_newton_reference(py::module_& m) {
    m.def(
        "reference_rglru_forward",
        [](const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const HostTensor& x,
           const HostTensor& gate_a, const HostTensor& gate_x, const HostTensor& lambda,
           const OptionalHostTensor& h0, const HostTensor& h, const HostTensor& h_last) {
            const std::string call = "flashrnn::reference::rglru_forward";
            py::gil_scoped_release release;
            const reference::RglruForwardResult result = reference::rglru_forward(
                rglru_shape(sizes), host_view<const double>(x).values, host_view<const double>(gate_a).values,
                host_view<const double>(gate_x).values, host_view<const double>(lambda).values,
                optional_values(h0));
            copy_into(call, "h", result.h, h);
            copy_into(call, "h_last", result.h_last, h_last);
        },
        "The CPU float64 reference of the RG-LRU's forward into `h` [B*R, L] and `h_last` [B*R].");
    m.def(
        "reference_rglru_backward",
        [](const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const HostTensor& x,
           const HostTensor& gate_a, const HostTensor& gate_x, const HostTensor& lambda,
           const OptionalHostTensor& h0, const HostTensor& h, const HostTensor& dh,
           const OptionalHostTensor& dh_last, const HostTensor& dx, const HostTensor& d_gate_a,
           const HostTensor& d_gate_x, const HostTensor& d_lambda, const HostTensor& dh0) {
            const std::string call = "flashrnn::reference::rglru_backward";
            py::gil_scoped_release release;
            const reference::RglruGradients result = reference::rglru_backward(
                rglru_shape(sizes), host_view<const double>(x).values, host_view<const double>(gate_a).values,
                host_view<const double>(gate_x).values, host_view<const double>(lambda).values,
                optional_values(h0), host_view<const double>(h).values, host_view<const double>(dh).values,
                optional_values(dh_last));
            copy_into(call, "dx", result.dx, dx);
            copy_into(call, "d_gate_a", result.d_gate_a, d_gate_a);
            copy_into(call, "d_gate_x", result.d_gate_x, d_gate_x);
            copy_into(call, "d_lambda", result.d_lambda, d_lambda);
            copy_into(call, "dh0", result.dh0, dh0);
        },
        "The CPU float64 reference of the RG-LRU's backward into the five gradient tensors.");
    m.def(
        "reference_newton_forward",
        [](const std::string& cell, const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes,
           const std::string& backend, int max_iterations, double absolute, double relative,
           const HostTensor& inputs, const HostTensor& parameters, const OptionalHostTensor& initial_state,
           const HostTensor& states, const HostTensor& last_state) {
            const newton::Cell parsed = newton::parse_cell(cell);
            const newton::Options options = newton_options(backend, max_iterations, absolute, relative);
            const std::string call = "flashrnn::reference::newton_forward(" + cell + ")";
            newton::validate("reference::newton_forward(" + cell + ")", options); // adds "flashrnn::"
            py::gil_scoped_release release;
            const reference::NewtonInputs args{host_view<const double>(inputs),
                                               host_view<const double>(parameters),
                                               optional_host_view(initial_state)};
            // `newton` runs Newton's method as the GPU does; the others the exact sequential forward.
            const reference::NewtonForwardResult result =
                options.backend == newton::Backend::newton || options.backend == newton::Backend::fused
                    ? reference::newton_solve(parsed, newton_shape(sizes), args, options)
                    : reference::newton_sequential_forward(parsed, newton_shape(sizes), args);
            copy_into(call, "states", result.states.values, states);
            copy_into(call, "last_state", result.last_state.values, last_state);
            return std::make_tuple(result.statistics.iterations, result.statistics.max_residual,
                                   result.statistics.tolerance_met);
        },
        "The CPU float64 reference of a Newton cell's forward (backend 'newton': newton_solve, else the "
        "sequential forward) into `states` and `last_state`; returns (iterations, max residual, tolerance "
        "met).");
    m.def(
        "reference_newton_backward",
        [](const std::string& cell, const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes,
           const HostTensor& inputs, const HostTensor& parameters, const OptionalHostTensor& initial_state,
           const HostTensor& states, const OptionalHostTensor& d_states,
           const OptionalHostTensor& d_last_state, const HostTensor& d_inputs, const HostTensor& d_parameters,
           const HostTensor& d_initial_state) {
            const newton::Cell parsed = newton::parse_cell(cell);
            const std::string call = "flashrnn::reference::newton_backward(" + cell + ")";
            py::gil_scoped_release release;
            const reference::NewtonBackwardInputs args{{host_view<const double>(inputs),
                                                        host_view<const double>(parameters),
                                                        optional_host_view(initial_state)},
                                                       host_view<const double>(states),
                                                       optional_host_view(d_states),
                                                       optional_host_view(d_last_state)};
            const reference::NewtonGradients result =
                reference::newton_backward(parsed, newton_shape(sizes), args);
            copy_into(call, "d_inputs", result.d_inputs.values, d_inputs);
            copy_into(call, "d_parameters", result.d_parameters.values, d_parameters);
            copy_into(call, "d_initial_state", result.d_initial_state.values, d_initial_state);
        },
        "The CPU float64 reference of a Newton cell's backward (eq. 6) into the three gradient tensors.");
    m.def(
        "reference_newton_reduce",
        [](const std::string& structure, bool reverse, const HostTensor& jacobians, const HostTensor& rhs,
           const HostTensor& solution) {
            const auto& sizes = std::get<1>(rhs);
            const newton::ReductionProblem problem{
                DType::fp32,
                jacobian_structure(structure),
                {sizes.size() == 3 ? sizes[1] : 0, sizes.size() == 3 ? sizes[2] : 0},
                reverse};
            py::gil_scoped_release release;
            const reference::Tensor result = reference::newton_reduce(
                problem, host_view<const double>(jacobians), host_view<const double>(rhs));
            copy_into("flashrnn::reference::newton_reduce", "solution", result.values, solution);
        },
        "The CPU float64 reference of newton::reduce into `solution` [N, sequences, L].");
}

void bind_device(py::module_& m) {
    m.def(
        "rnn_workspace_bytes",
        [](const std::string& cell, const std::string& dtype, const Sizes& sizes, bool batch_first,
           const std::string& backend, bool backward, int device) {
            const rnn::Problem problem =
                rnn_problem("flashrnn::rnn::workspace_bytes", "gate_inputs", cell, dtype, sizes, batch_first);
            const rnn::Options options = rnn_options(backend);
            py::gil_scoped_release release; // the automatic choice may compile the fused kernels
            DeviceGuard guard(device);
            return backward ? rnn::backward_workspace_bytes(problem, options)
                            : rnn::forward_workspace_bytes(problem, options);
        },
        "Bytes of device workspace rnn_forward (or rnn_backward) needs on `device`.");
    m.def(
        "resolve_backend",
        [](const std::string& cell, const std::string& dtype, const Sizes& sizes, bool batch_first,
           const std::string& backend, bool backward, int device) {
            const rnn::Problem problem =
                rnn_problem("flashrnn::rnn::resolve_backend", "gate_inputs", cell, dtype, sizes, batch_first);
            const rnn::Backend requested = rnn::parse_backend(backend);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            return std::string(rnn::to_string(rnn::resolve_backend(
                problem, requested, backward ? FusedPass::backward : FusedPass::forward)));
        },
        "The backend `backend` stands for in the forward (or backward) on `device` ('automatic' -> 'fused' "
        "or 'alternating', pass by pass).");
    m.def(
        "rnn_forward",
        [](const std::string& cell, const Sizes& sizes, bool batch_first, const std::string& backend,
           const DeviceTensor& gate_inputs, const DeviceTensor& recurrent_weights, const DeviceTensor& bias,
           const DeviceTensor& initial_states, const DeviceTensor& states,
           const OptionalDeviceTensor& last_state, const OptionalDeviceTensor& gate_cache,
           std::uintptr_t workspace, std::size_t workspace_bytes, int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::rnn::forward";
            const rnn::Problem problem =
                rnn_problem(call, "gate_inputs", cell, std::get<1>(gate_inputs), sizes, batch_first);
            const rnn::ForwardArgs args{
                device_view<ConstTensorView>(call, "gate_inputs", gate_inputs),
                device_view<ConstTensorView>(call, "recurrent_weights", recurrent_weights),
                device_view<ConstTensorView>(call, "bias", bias),
                device_view<ConstTensorView>(call, "initial_states", initial_states),
                device_view<TensorView>(call, "states", states),
                device_view<TensorView>(call, "last_state", last_state),
                device_view<TensorView>(call, "gate_cache", gate_cache),
                {reinterpret_cast<void*>(workspace), workspace_bytes}};
            const rnn::Options options = rnn_options(backend);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            rnn::forward(problem, args, options, stream_of(stream));
        },
        "rnn::forward on `device` and `stream` (a cudaStream_t as an integer); asynchronous.");
    m.def(
        "rnn_backward",
        [](const std::string& cell, const Sizes& sizes, bool batch_first, const std::string& backend,
           const std::string& mode, double clip_value, const DeviceTensor& recurrent_weights,
           const DeviceTensor& states, const DeviceTensor& gate_cache, const OptionalDeviceTensor& d_states,
           const OptionalDeviceTensor& d_last_state, const DeviceTensor& d_gate_inputs,
           const DeviceTensor& d_recurrent_weights, const DeviceTensor& d_bias,
           const DeviceTensor& d_initial_states, std::uintptr_t workspace, std::size_t workspace_bytes,
           int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::rnn::backward";
            const rnn::Problem problem =
                rnn_problem(call, "states", cell, std::get<1>(states), sizes, batch_first);
            const rnn::BackwardArgs args{
                device_view<ConstTensorView>(call, "recurrent_weights", recurrent_weights),
                device_view<ConstTensorView>(call, "states", states),
                device_view<ConstTensorView>(call, "gate_cache", gate_cache),
                device_view<ConstTensorView>(call, "d_states", d_states),
                device_view<ConstTensorView>(call, "d_last_state", d_last_state),
                device_view<TensorView>(call, "d_gate_inputs", d_gate_inputs),
                device_view<TensorView>(call, "d_recurrent_weights", d_recurrent_weights),
                device_view<TensorView>(call, "d_bias", d_bias),
                device_view<TensorView>(call, "d_initial_states", d_initial_states),
                {reinterpret_cast<void*>(workspace), workspace_bytes}};
            const rnn::Options options = rnn_options(backend, mode, clip_value);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            rnn::backward(problem, args, options, stream_of(stream));
        },
        "rnn::backward on `device` and `stream`; asynchronous.");
    m.def(
        "linrec_forward",
        [](const DeviceTensor& x, const DeviceTensor& c, const DeviceTensor& y, bool reverse, int device,
           std::uintptr_t stream) {
            const std::string call = "flashrnn::linrec::forward";
            const linrec::Problem problem = linrec_problem(call, y, reverse);
            const linrec::ForwardArgs args{device_view<ConstTensorView>(call, "x", x),
                                           device_view<ConstTensorView>(call, "c", c),
                                           device_view<TensorView>(call, "y", y)};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            linrec::forward(problem, args, {}, stream_of(stream));
        },
        "linrec::forward on `device` and `stream`; asynchronous.");
    m.def(
        "linrec_backward",
        [](const DeviceTensor& dy, const DeviceTensor& c, const DeviceTensor& y, const DeviceTensor& dx,
           const DeviceTensor& dc, bool reverse, int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::linrec::backward";
            const linrec::Problem problem = linrec_problem(call, y, reverse);
            const linrec::BackwardArgs args{
                device_view<ConstTensorView>(call, "dy", dy), device_view<ConstTensorView>(call, "c", c),
                device_view<ConstTensorView>(call, "y", y), device_view<TensorView>(call, "dx", dx),
                device_view<TensorView>(call, "dc", dc)};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            linrec::backward(problem, args, {}, stream_of(stream));
        },
        "linrec::backward on `device` and `stream`; asynchronous.");
}

void bind_scan_and_newton_device(py::module_& m) {
    m.def(
        "rglru_forward",
        [](const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const DeviceTensor& x,
           const DeviceTensor& gate_a, const DeviceTensor& gate_x, const DeviceTensor& lambda,
           const OptionalDeviceTensor& h0, const DeviceTensor& h, const OptionalDeviceTensor& h_last,
           int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::rglru::forward";
            const rglru::Problem problem{dtype_of(call, "x", std::get<1>(x)), rglru_shape(sizes)};
            const rglru::ForwardArgs args{device_view<ConstTensorView>(call, "x", x),
                                          device_view<ConstTensorView>(call, "gate_a", gate_a),
                                          device_view<ConstTensorView>(call, "gate_x", gate_x),
                                          device_view<ConstTensorView>(call, "lambda", lambda),
                                          device_view<ConstTensorView>(call, "h0", h0),
                                          device_view<TensorView>(call, "h", h),
                                          device_view<TensorView>(call, "h_last", h_last)};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            rglru::forward(problem, args, {}, stream_of(stream));
        },
        "rglru::forward on `device` and `stream`; asynchronous.");
    m.def(
        "rglru_backward",
        [](const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const DeviceTensor& x,
           const DeviceTensor& gate_a, const DeviceTensor& gate_x, const DeviceTensor& lambda,
           const OptionalDeviceTensor& h0, const DeviceTensor& h, const DeviceTensor& dh,
           const OptionalDeviceTensor& dh_last, const DeviceTensor& dx, const DeviceTensor& d_gate_a,
           const DeviceTensor& d_gate_x, const DeviceTensor& d_lambda, const OptionalDeviceTensor& dh0,
           int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::rglru::backward";
            const rglru::Problem problem{dtype_of(call, "x", std::get<1>(x)), rglru_shape(sizes)};
            const rglru::BackwardArgs args{device_view<ConstTensorView>(call, "x", x),
                                           device_view<ConstTensorView>(call, "gate_a", gate_a),
                                           device_view<ConstTensorView>(call, "gate_x", gate_x),
                                           device_view<ConstTensorView>(call, "lambda", lambda),
                                           device_view<ConstTensorView>(call, "h0", h0),
                                           device_view<ConstTensorView>(call, "h", h),
                                           device_view<ConstTensorView>(call, "dh", dh),
                                           device_view<ConstTensorView>(call, "dh_last", dh_last),
                                           device_view<TensorView>(call, "dx", dx),
                                           device_view<TensorView>(call, "d_gate_a", d_gate_a),
                                           device_view<TensorView>(call, "d_gate_x", d_gate_x),
                                           device_view<TensorView>(call, "d_lambda", d_lambda),
                                           device_view<TensorView>(call, "dh0", dh0)};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            rglru::backward(problem, args, {}, stream_of(stream));
        },
        "rglru::backward on `device` and `stream`; asynchronous.");
    m.def(
        "newton_workspace_bytes",
        [](const std::string& cell, const std::string& dtype,
           const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const std::string& backend,
           int max_iterations, double absolute, double relative, bool backward, int device) {
            const std::string call = "flashrnn::newton::workspace_bytes";
            const newton::Problem problem = newton_problem(call, cell, dtype, sizes);
            const newton::Options options = newton_options(backend, max_iterations, absolute, relative);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            return backward ? newton::backward_workspace_bytes(problem, options)
                            : newton::forward_workspace_bytes(problem, options);
        },
        "Bytes of device workspace newton_forward (or newton_backward) needs on `device`.");
    m.def(
        "newton_resolve_backend",
        [](const std::string& cell, const std::string& dtype,
           const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes, const std::string& backend,
           int max_iterations, double absolute, double relative, int device) {
            const std::string call = "flashrnn::newton::resolve_backend";
            const newton::Problem problem = newton_problem(call, cell, dtype, sizes);
            const newton::Options options = newton_options(backend, max_iterations, absolute, relative);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            return std::string(newton::to_string(newton::resolve_backend(problem, options)));
        },
        "The backend `backend` stands for on `device` ('automatic' -> 'newton' or 'sequential').");
    m.def(
        "newton_forward",
        [](const std::string& cell, const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes,
           const std::string& backend, int max_iterations, double absolute, double relative,
           const DeviceTensor& inputs, const DeviceTensor& parameters,
           const OptionalDeviceTensor& initial_state, const DeviceTensor& states,
           const OptionalDeviceTensor& last_state, const OptionalDeviceTensor& statistics,
           std::uintptr_t workspace, std::size_t workspace_bytes, int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::newton::forward";
            const newton::Problem problem = newton_problem(call, cell, std::get<1>(inputs), sizes);
            const newton::Options options = newton_options(backend, max_iterations, absolute, relative);
            const newton::ForwardArgs args{device_view<ConstTensorView>(call, "inputs", inputs),
                                           device_view<ConstTensorView>(call, "parameters", parameters),
                                           device_view<ConstTensorView>(call, "initial_state", initial_state),
                                           device_view<TensorView>(call, "states", states),
                                           device_view<TensorView>(call, "last_state", last_state),
                                           device_view<TensorView>(call, "statistics", statistics),
                                           {reinterpret_cast<void*>(workspace), workspace_bytes}};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            newton::forward(problem, args, options, stream_of(stream));
        },
        "newton::forward on `device` and `stream`; asynchronous.");
    m.def(
        "newton_backward",
        [](const std::string& cell, const std::tuple<std::int64_t, std::int64_t, std::int64_t>& sizes,
           const std::string& backend, int max_iterations, double absolute, double relative,
           const DeviceTensor& inputs, const DeviceTensor& parameters,
           const OptionalDeviceTensor& initial_state, const DeviceTensor& states,
           const OptionalDeviceTensor& d_states, const OptionalDeviceTensor& d_last_state,
           const DeviceTensor& d_inputs, const DeviceTensor& d_parameters,
           const OptionalDeviceTensor& d_initial_state, std::uintptr_t workspace, std::size_t workspace_bytes,
           int device, std::uintptr_t stream) {
            const std::string call = "flashrnn::newton::backward";
            const newton::Problem problem = newton_problem(call, cell, std::get<1>(inputs), sizes);
            const newton::Options options = newton_options(backend, max_iterations, absolute, relative);
            const newton::BackwardArgs args{
                device_view<ConstTensorView>(call, "inputs", inputs),
                device_view<ConstTensorView>(call, "parameters", parameters),
                device_view<ConstTensorView>(call, "initial_state", initial_state),
                device_view<ConstTensorView>(call, "states", states),
                device_view<ConstTensorView>(call, "d_states", d_states),
                device_view<ConstTensorView>(call, "d_last_state", d_last_state),
                device_view<TensorView>(call, "d_inputs", d_inputs),
                device_view<TensorView>(call, "d_parameters", d_parameters),
                device_view<TensorView>(call, "d_initial_state", d_initial_state),
                {reinterpret_cast<void*>(workspace), workspace_bytes}};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            newton::backward(problem, args, options, stream_of(stream));
        },
        "newton::backward on `device` and `stream`; asynchronous.");
    m.def(
        "newton_reduce_workspace_bytes",
        [](const std::string& structure, const DeviceTensor& rhs, bool reverse, int device) {
            const std::string call = "flashrnn::newton::reduce";
            const newton::ReductionProblem problem = reduction_problem(call, structure, rhs, reverse);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            return newton::reduce_workspace_bytes(problem);
        },
        "Bytes of device workspace newton_reduce needs on `device` for this right-hand side.");
    m.def(
        "newton_reduce",
        [](const std::string& structure, bool reverse, const DeviceTensor& jacobians, const DeviceTensor& rhs,
           const DeviceTensor& solution, std::uintptr_t workspace, std::size_t workspace_bytes, int device,
           std::uintptr_t stream) {
            const std::string call = "flashrnn::newton::reduce";
            const newton::ReductionProblem problem = reduction_problem(call, structure, rhs, reverse);
            const newton::ReductionArgs args{device_view<ConstTensorView>(call, "jacobians", jacobians),
                                             device_view<ConstTensorView>(call, "rhs", rhs),
                                             device_view<TensorView>(call, "solution", solution),
                                             {reinterpret_cast<void*>(workspace), workspace_bytes}};
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            newton::reduce(problem, args, stream_of(stream));
        },
        "newton::reduce on `device` and `stream`; asynchronous.");
}

} // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "FlashRNN's C++ library over raw addresses, sizes, dtypes and CUDA streams.";
    // The base first: pybind11 tries the translators registered last first.
    const auto error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
    py::register_exception<ShapeError>(m, "ShapeError", error.ptr());
    py::register_exception<TilingError>(m, "TilingError", error.ptr());
    py::register_exception<DeviceError>(m, "DeviceError", error.ptr());
    py::register_exception<UnsupportedError>(m, "UnsupportedError", error.ptr());
    py::register_exception<NumericalError>(m, "NumericalError", error.ptr());

    m.def("built_with_cuda", [] {
#if FLASHRNN_WITH_CUDA
        return true;
#else
        return false;
#endif
    });
    m.def("cuda_device_available", &cuda_device_available,
          "True when FlashRNN was built with CUDA and a CUDA device is present.");
    m.def(
        "cell_info",
        [](const std::string& name) {
            const CellInfo info = cell_info(parse_cell(name));
            py::dict d;
            d["num_states"] = info.num_states;
            d["num_gates"] = info.num_gates;
            d["num_input_gates"] = info.num_input_gates;
            d["num_recurrent_gates"] = info.num_recurrent_gates;
            d["state_names"] = std::vector<std::string>(info.state_names.begin(), info.state_names.end());
            d["gate_names"] = std::vector<std::string>(info.gate_names.begin(), info.gate_names.end());
            return d;
        },
        "States, gates, Wx rows and R blocks of a cell (docs/kernels.md).");
    m.def("cells", [] {
        std::vector<std::string> names;
        for (Cell cell : all_cells)
            names.emplace_back(cell_info(cell).name);
        return names;
    });
    m.def(
        "newton_cell_info",
        [](const std::string& name) {
            const newton::CellInfo info = newton::cell_info(newton::parse_cell(name));
            py::dict d;
            d["num_states"] = info.num_states;
            d["num_gates"] = info.num_gates;
            d["num_parameters"] = info.num_parameters;
            d["state_names"] = std::vector<std::string>(info.state_names.begin(), info.state_names.end());
            d["gate_names"] = std::vector<std::string>(info.gate_names.begin(), info.gate_names.end());
            d["parameter_names"] =
                std::vector<std::string>(info.parameter_names.begin(), info.parameter_names.end());
            return d;
        },
        "States, gates (input projections) and diagonal parameters of a Newton cell (docs/kernels.md).");
    m.def("newton_cells", [] {
        std::vector<std::string> names;
        for (newton::Cell cell : newton::all_cells)
            names.emplace_back(newton::to_string(cell));
        return names;
    });
    m.attr("newton_statistics_elements") = newton::kStatisticsElements;
    bind_reference(m);
    bind_scan_and_newton_reference(m);
    bind_device(m);
    bind_scan_and_newton_device(m);
}

// The `flashrnn._core` extension: FlashRNN's C++ API over raw addresses, sizes, dtypes and CUDA stream
// handles (Python integers), so that it links against no framework. The package's torch ops (flashrnn/
// _ops.py) pass their tensors' data_ptr(), shape and stride() here.
//
// Two families of calls:
//   reference_*: the CPU float64 reference on dense host buffers (the CPU path of the ops);
//   rnn_* / linrec_*: the CUDA library on device tensor views, on the given device and stream.
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
           const std::string& backend, int device) {
            const rnn::Problem problem =
                rnn_problem("flashrnn::rnn::resolve_backend", "gate_inputs", cell, dtype, sizes, batch_first);
            const rnn::Backend requested = rnn::parse_backend(backend);
            py::gil_scoped_release release;
            DeviceGuard guard(device);
            return std::string(rnn::to_string(rnn::resolve_backend(problem, requested)));
        },
        "The backend `backend` stands for on `device` ('automatic' -> 'fused' or 'alternating').");
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

} // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "FlashRNN's C++ library over raw addresses, sizes, dtypes and CUDA streams.";
    // The base first: pybind11 tries the translators registered last first.
    const auto error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
    py::register_exception<ShapeError>(m, "ShapeError", error.ptr());
    py::register_exception<TilingError>(m, "TilingError", error.ptr());
    py::register_exception<DeviceError>(m, "DeviceError", error.ptr());
    py::register_exception<UnsupportedError>(m, "UnsupportedError", error.ptr());

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
    bind_reference(m);
    bind_device(m);
}

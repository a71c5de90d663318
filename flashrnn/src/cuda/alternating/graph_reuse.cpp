// Graphs kept for repeated passes (graph_reuse.hpp, graph_cache.hpp): per thread and device, so that a
// graph only ever carries the cuBLAS workspace of the thread that replays it (cublas_handle.hpp), and
// no graph object is shared between threads (CUDA's graph calls are not thread-safe on one object).
#include "cuda/alternating/graph_reuse.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>

#include "cuda/alternating/graph_cache.hpp"
#include "cuda/common/cublas_handle.hpp"
#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "cuda/rnn/workspace.hpp"
#include "flashrnn/rnn/alternating.hpp"

namespace flashrnn::alternating {
namespace {

// A training loop needs two graphs per shape (forward and backward) and one or two sets of buffers;
// an executable graph of T = 1024 holds a few thousand nodes.
constexpr std::size_t kGraphsPerThreadAndDevice = 16;
constexpr std::size_t kGraphsPerShape = 4;
// Staged graphs hold buffers as large as the pass's tensors: a few shapes' worth (a model's layers
// usually share one shape, and each pass of it has one staged graph).
constexpr std::size_t kStagedPassesPerThreadAndDevice = 4;
// A staged buffer lies where the caller's does within this many bytes (WorkspacePlan's alignment).
constexpr std::size_t kStagedAlignment = 256;

std::atomic<bool>& reuse_flag() {
    static std::atomic<bool> flag{graph_reuse_from_environment(std::getenv("FLASHRNN_ALTERNATING_GRAPHS"))};
    return flag;
}

class CapturedGraph {
  public:
    explicit CapturedGraph(cudaGraph_t graph) : graph_(graph) {}
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;
    ~CapturedGraph() { cudaGraphDestroy(graph_); }
    cudaGraph_t get() const { return graph_; }

  private:
    cudaGraph_t graph_;
};

class ExecutableGraph {
  public:
    ExecutableGraph() = default;
    explicit ExecutableGraph(const CapturedGraph& graph) {
        cuda::check(cudaGraphInstantiate(&exec_, graph.get(), 0), "cudaGraphInstantiate");
    }
    ExecutableGraph(ExecutableGraph&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
    ExecutableGraph& operator=(ExecutableGraph&& other) noexcept {
        std::swap(exec_, other.exec_);
        return *this;
    }
    // A graph still running is freed when it completes.
    ~ExecutableGraph() {
        if (exec_) cudaGraphExecDestroy(exec_);
    }
    cudaGraphExec_t get() const { return exec_; }

  private:
    cudaGraphExec_t exec_ = nullptr;
};

// True also when the question cannot be answered (the legacy stream while another stream is captured
// in global mode): the direct launches then report what is wrong.
bool being_captured(Stream stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return status != cudaStreamCaptureStatusNone;
}

using Enqueue = std::function<void(Stream, const PassBuffers&)>;

CapturedGraph capture(cudaStream_t capture_stream, const Enqueue& enqueue, const PassBuffers& buffers) {
    // Thread-local mode: other threads' CUDA calls stay unrestricted while this one records.
    cuda::check(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture");
    try {
        enqueue(capture_stream, buffers);
    } catch (...) { // end the capture, or every later call of this thread that is unsafe in capture fails
        cudaGraph_t partial = nullptr;
        cudaStreamEndCapture(capture_stream, &partial);
        if (partial) cudaGraphDestroy(partial);
        (void)cudaGetLastError();
        throw;
    }
    cudaGraph_t graph = nullptr;
    cuda::check(cudaStreamEndCapture(capture_stream, &graph), "cudaStreamEndCapture");
    return CapturedGraph(graph);
}

// Where a buffer lies within kStagedAlignment: cuBLAS picks its kernels by the operands' alignment,
// so a staged buffer lies where the caller's does, and the staged graph runs the direct launches'
// kernels (bitwise their results).
std::size_t misalignment(const void* data) {
    return reinterpret_cast<std::uintptr_t>(data) % kStagedAlignment;
}

// Which buffers a staged graph was made for: per entry 0 if absent, else its bytes (inputs and
// outputs, which the shape decides) or 1 (scratch, which may be given larger than needed), and its
// misalignment.
using StagedLayout = std::array<std::array<std::size_t, 2>, kMaxPassBuffers>;

StagedLayout staged_layout(const PassBuffers& buffers) {
    StagedLayout layout{};
    for (std::size_t i = 0; i < kMaxPassBuffers; ++i)
        if (buffers[i].data)
            layout[i] = {buffers[i].use == PassBuffer::Use::scratch ? 1 : buffers[i].bytes,
                         misalignment(buffers[i].data)};
    return layout;
}

// cudaMalloc refused the staged buffers: the call launches directly instead.
struct StagingRefused {};

// A pass's graph over buffers of its own, one allocation holding one of each of the caller's
// buffers: a call copies its inputs in, launches the graph and copies the outputs out, all on the
// caller's stream. The event orders a call after the previous one when they come on other streams.
class StagedPass {
  public:
    StagedPass(const PassBuffers& like, cudaStream_t capture_stream, const Enqueue& enqueue) {
        // Laid out as a workspace (256-byte aligned takes), each buffer shifted by the caller's
        // misalignment: measured first, then taken from the allocation.
        const auto lay_out = [&](WorkspacePlan& plan) {
            for (std::size_t i = 0; i < kMaxPassBuffers; ++i) {
                if (!like[i].data) continue;
                const std::size_t shift = misalignment(like[i].data);
                void* start = plan.take(static_cast<std::int64_t>(like[i].bytes + shift), 1);
                staged_[i] = like[i];
                staged_[i].data = start ? static_cast<std::byte*>(start) + shift : nullptr; // null: measuring
            }
        };
        WorkspacePlan measure;
        lay_out(measure);
        void* memory = nullptr;
        if (cudaMalloc(&memory, std::max<std::size_t>(measure.size(), 1)) != cudaSuccess) {
            (void)cudaGetLastError();
            throw StagingRefused{};
        }
        memory_.reset(memory);
        WorkspacePlan plan(memory);
        lay_out(plan);
        cudaEvent_t done = nullptr;
        cuda::check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        done_.reset(done);
        graph_ = ExecutableGraph(capture(capture_stream, enqueue, staged_));
    }

    void launch(const PassBuffers& caller, cudaStream_t stream) const {
        cuda::check(cudaStreamWaitEvent(stream, done_.get(), 0), "cudaStreamWaitEvent (staged pass)");
        copy(caller, PassBuffer::Use::input, stream);
        cuda::check(cudaGraphLaunch(graph_.get(), stream), "cudaGraphLaunch (staged pass)");
        copy(caller, PassBuffer::Use::output, stream);
        cuda::check(cudaEventRecord(done_.get(), stream), "cudaEventRecord (staged pass)");
    }

  private:
    void copy(const PassBuffers& caller, PassBuffer::Use use, cudaStream_t stream) const {
        const bool in = use == PassBuffer::Use::input;
        for (std::size_t i = 0; i < kMaxPassBuffers; ++i) {
            if (!caller[i].data || caller[i].use != use) continue;
            cuda::check(cudaMemcpyAsync(in ? staged_[i].data : caller[i].data,
                                        in ? caller[i].data : staged_[i].data, caller[i].bytes,
                                        cudaMemcpyDeviceToDevice, stream),
                        in ? "cudaMemcpyAsync (staged pass input)" : "cudaMemcpyAsync (staged pass output)");
        }
    }

    struct FreeMemory { // cudaFree waits for the device: no launch in flight still uses the memory
        void operator()(void* memory) const { cudaFree(memory); }
    };
    struct DestroyEvent {
        void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
    };
    PassBuffers staged_{};
    std::unique_ptr<void, FreeMemory> memory_;
    std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, DestroyEvent> done_;
    ExecutableGraph graph_; // destroyed first: it refers to the memory
};

struct DeviceGraphs {
    cudaStream_t capture_stream = nullptr;
    GraphCache<PassKey, PassBuffers, ExecutableGraph> cache{kGraphsPerThreadAndDevice, kGraphsPerShape};
    GraphCache<PassKey, StagedLayout, StagedPass> staged{kStagedPassesPerThreadAndDevice,
                                                         kStagedPassesPerThreadAndDevice};
    GraphReuseStats stats;

    DeviceGraphs() = default;
    DeviceGraphs(const DeviceGraphs&) = delete;
    DeviceGraphs& operator=(const DeviceGraphs&) = delete;
    ~DeviceGraphs() { // at process exit the context may be gone: nothing to report then
        cache.clear();
        staged.clear();
        if (capture_stream) cudaStreamDestroy(capture_stream);
    }
};

DeviceGraphs& graphs_of_current_device() {
    thread_local std::map<int, DeviceGraphs> graphs;
    return graphs[cuda::current_device()];
}

} // namespace

void set_graph_reuse(bool enabled) {
    reuse_flag().store(enabled);
}
bool graph_reuse() {
    return reuse_flag().load();
}

GraphReuseStats graph_reuse_stats() {
    DeviceGraphs& graphs = graphs_of_current_device();
    GraphReuseStats stats = graphs.stats;
    stats.kept = graphs.cache.size() + graphs.staged.size();
    return stats;
}

void release_graphs() {
    DeviceGraphs& graphs = graphs_of_current_device();
    graphs.cache.clear();
    graphs.staged.clear();
}

void run_pass(const PassKey& key, const PassBuffers& buffers, Stream stream, const Enqueue& enqueue) {
    DeviceGraphs& graphs = graphs_of_current_device();
    auto launch_directly = [&] {
        ++graphs.stats.direct;
        enqueue(stream, buffers);
    };
    if (!graph_reuse() || being_captured(stream)) return launch_directly();
    if (!graphs.capture_stream)
        cuda::check(cudaStreamCreateWithFlags(&graphs.capture_stream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags (capture stream)");
    cuda::cublas_for(graphs.capture_stream); // the thread's first call creates its handle: not in capture
    GraphOutcome outcome{};
    const ExecutableGraph* graph = graphs.cache.get(
        key, buffers, [&] { return ExecutableGraph(capture(graphs.capture_stream, enqueue, buffers)); },
        outcome);
    if (graph) {
        cuda::check(cudaGraphLaunch(graph->get(), stream), "cudaGraphLaunch");
        ++(outcome == GraphOutcome::made ? graphs.stats.made : graphs.stats.replayed);
        return;
    }
    const StagedPass* staged = nullptr;
    try {
        GraphOutcome staged_outcome{};
        staged = graphs.staged.get(
            key, staged_layout(buffers), [&] { return StagedPass(buffers, graphs.capture_stream, enqueue); },
            staged_outcome);
    } catch (const StagingRefused&) { // no memory for the staged buffers: as with graphs off
    }
    if (!staged) return launch_directly();
    staged->launch(buffers, stream);
    ++graphs.stats.staged;
}

} // namespace flashrnn::alternating

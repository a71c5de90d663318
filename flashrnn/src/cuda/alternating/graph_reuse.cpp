// Graphs kept for repeated passes (graph_reuse.hpp, graph_cache.hpp): per thread and device, so that a
// graph only ever carries the cuBLAS workspace of the thread that replays it (cublas_handle.hpp), and
// no graph object is shared between threads (CUDA's graph calls are not thread-safe on one object).
#include "cuda/alternating/graph_reuse.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <utility>

#include "cuda/alternating/graph_cache.hpp"
#include "cuda/common/cublas_handle.hpp"
#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"
#include "flashrnn/rnn/alternating.hpp"

namespace flashrnn::alternating {
namespace {

// A training loop needs two graphs per shape (forward and backward) and one or two sets of buffers;
// an executable graph of T = 1024 holds a few thousand nodes.
constexpr std::size_t kGraphsPerThreadAndDevice = 16;
constexpr std::size_t kGraphsPerShape = 4;

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

    // The kept graph takes the parameters of `graph` (same topology); if CUDA refuses the update (a
    // kernel changed, e.g. cuBLAS chose another for the new pointers' alignment), a new instantiation.
    void refresh(const CapturedGraph& graph) {
        cudaGraphExecUpdateResultInfo info{};
        if (cudaGraphExecUpdate(exec_, graph.get(), &info) == cudaSuccess) return;
        (void)cudaGetLastError(); // the refusal is answered here, not by the next launch's check
        *this = ExecutableGraph(graph);
    }

  private:
    cudaGraphExec_t exec_ = nullptr;
};

struct DeviceGraphs {
    cudaStream_t capture_stream = nullptr;
    GraphCache<PassKey, PassPointers, ExecutableGraph> cache{kGraphsPerThreadAndDevice, kGraphsPerShape};
    GraphReuseStats stats;

    DeviceGraphs() = default;
    DeviceGraphs(const DeviceGraphs&) = delete;
    DeviceGraphs& operator=(const DeviceGraphs&) = delete;
    ~DeviceGraphs() { // at process exit the context may be gone: nothing to report then
        cache.clear();
        if (capture_stream) cudaStreamDestroy(capture_stream);
    }
};

DeviceGraphs& graphs_of_current_device() {
    thread_local std::map<int, DeviceGraphs> graphs;
    return graphs[cuda::current_device()];
}

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

CapturedGraph capture(cudaStream_t capture_stream, const std::function<void(Stream)>& enqueue) {
    // Thread-local mode: other threads' CUDA calls stay unrestricted while this one records.
    cuda::check(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture");
    try {
        enqueue(capture_stream);
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
    stats.kept = graphs.cache.size();
    return stats;
}

void release_graphs() {
    graphs_of_current_device().cache.clear();
}

void run_pass(const PassKey& key, const PassPointers& pointers, Stream stream,
              const std::function<void(Stream)>& enqueue) {
    DeviceGraphs& graphs = graphs_of_current_device();
    if (!graph_reuse() || being_captured(stream)) {
        ++graphs.stats.direct;
        enqueue(stream);
        return;
    }
    if (!graphs.capture_stream)
        cuda::check(cudaStreamCreateWithFlags(&graphs.capture_stream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags (capture stream)");
    cuda::cublas_for(graphs.capture_stream); // the thread's first call creates its handle: not in capture
    GraphOutcome outcome{};
    ExecutableGraph& graph = graphs.cache.get(
        key, pointers, [&] { return ExecutableGraph(capture(graphs.capture_stream, enqueue)); },
        [&](ExecutableGraph& kept) { kept.refresh(capture(graphs.capture_stream, enqueue)); }, outcome);
    cuda::check(cudaGraphLaunch(graph.get(), stream), "cudaGraphLaunch");
    switch (outcome) {
    case GraphOutcome::made:
        ++graphs.stats.made;
        break;
    case GraphOutcome::refreshed:
        ++graphs.stats.refreshed;
        break;
    case GraphOutcome::replayed:
        ++graphs.stats.replayed;
        break;
    }
}

} // namespace flashrnn::alternating

#include "cuda/common/cublas_handle.hpp"

#include <map>

#include "cuda/common/cuda_check.hpp"
#include "cuda/common/device.hpp"

namespace flashrnn::cuda {
namespace {

// cuBLAS's recommendation for Hopper; enough for every product of the alternating backend.
constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct ThreadHandle {
    cublasHandle_t handle = nullptr;
    void* workspace = nullptr;

    ThreadHandle() = default;
    ThreadHandle(const ThreadHandle&) = delete;
    ThreadHandle& operator=(const ThreadHandle&) = delete;
    ~ThreadHandle() { // errors at process exit (context already gone) are of no use to anyone
        if (handle) cublasDestroy(handle);
        if (workspace) cudaFree(workspace);
    }
};

} // namespace

cublasHandle_t cublas_for(Stream stream) {
    thread_local std::map<int, ThreadHandle> handles;
    ThreadHandle& entry = handles[current_device()];
    if (!entry.handle) {
        check(cudaMalloc(&entry.workspace, kWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
        check(cublasCreate(&entry.handle), "cublasCreate");
    }
    check(cublasSetStream(entry.handle, stream), "cublasSetStream");
    // cublasSetStream resets the workspace to cuBLAS's own pool, which allocates during capture.
    check(cublasSetWorkspace(entry.handle, entry.workspace, kWorkspaceBytes), "cublasSetWorkspace");
    return entry.handle;
}

} // namespace flashrnn::cuda

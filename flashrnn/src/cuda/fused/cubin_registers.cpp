// Register use read back from a loaded cubin (on a GPU): the driver's view, which a launch obeys.
#include "cuda/fused/fused_compiler.hpp"

#include "cuda/common/cuda_check.hpp"

namespace flashrnn {

RegisterReport registers_from_cubin(const CompiledKernel& kernel) {
    cudaLibrary_t library = nullptr;
    cuda::check(cudaLibraryLoadData(&library, kernel.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                "cudaLibraryLoadData (fused kernel cubin)");
    RegisterReport report;
    try {
        cudaKernel_t function = nullptr;
        cuda::check(cudaLibraryGetKernel(&function, library, kernel.lowered_name.c_str()),
                    "cudaLibraryGetKernel");
        cudaFuncAttributes attributes{};
        cuda::check(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(function)),
                    "cudaFuncGetAttributes");
        report.registers_per_thread = attributes.numRegs;
        report.stack_frame_bytes = static_cast<std::int64_t>(attributes.localSizeBytes);
        report.source = RegisterSource::cubin_attributes;
    } catch (...) {
        cudaLibraryUnload(library);
        throw;
    }
    cuda::check(cudaLibraryUnload(library), "cudaLibraryUnload");
    return report;
}

} // namespace flashrnn

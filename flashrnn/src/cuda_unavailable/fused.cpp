// Built when FlashRNN has no CUDA toolkit: the run-time compilation of the fused kernels is absent.
#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/core/error.hpp"

#include <stdexcept>

namespace flashrnn {
namespace {

[[noreturn]] void unavailable(const char* what) {
    throw UnsupportedError(std::string("flashrnn: ") + what +
                           " needs NVRTC, and FlashRNN was built without the CUDA toolkit");
}

} // namespace

std::optional<RegisterReport> parse_ptxas_report(std::string_view, std::string_view) {
    unavailable("parse_ptxas_report");
}
std::filesystem::path default_kernel_cache_dir() {
    unavailable("the kernel cache");
}
std::string nvrtc_version() {
    unavailable("nvrtc_version");
}
std::vector<std::string> nvrtc_include_dirs() {
    unavailable("nvrtc_include_dirs");
}
KernelSource fused_kernel_source(FusedPass) {
    unavailable("fused_kernel_source");
}
CompiledKernel compile_fused_kernel(const KernelSource&, const FusedKernelTraits&, std::string_view,
                                    const CompileOptions&) {
    unavailable("compile_fused_kernel");
}
std::string architecture_of(int compute_capability) {
    return "sm_" + std::to_string(compute_capability);
}
KernelFeedback register_feedback(const FusedKernelTraits& traits, const CompiledKernel& kernel) {
    const RegisterReport& r = kernel.registers;
    return {traits, r.registers_per_thread,
            r.source == RegisterSource::cubin_attributes ? r.stack_frame_bytes : r.spill_store_bytes};
}
RegisterReport registers_from_cubin(const CompiledKernel&) {
    unavailable("registers_from_cubin");
}
KernelCache::KernelCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
std::filesystem::path KernelCache::path_of(const std::string&) const {
    unavailable("the kernel cache");
}
std::optional<CompiledKernel> KernelCache::load(const std::string&) const {
    unavailable("the kernel cache");
}
void KernelCache::store(const std::string&, const CompiledKernel&) const {
    unavailable("the kernel cache");
}

} // namespace flashrnn

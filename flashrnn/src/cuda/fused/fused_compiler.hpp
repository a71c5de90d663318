// Run-time compilation of the fused kernels (NVRTC, no GPU needed) and their on-disk cache.
//
// A kernel is compiled for one FusedKernelTraits: the traits are rendered as C++ (to_source) in
// front of the kernel source, compiled to a CUBIN for one architecture ("sm_90"), and the compiler's
// register report (ptxas -v) is kept with it, so that the tiling model can be tightened when the
// kernel spills (FusedTilingRequest::feedback). Compiled kernels are cached on disk, keyed by the
// source, the traits, the architecture, the options and the NVRTC version. Built without CUDA, every
// function here throws UnsupportedError saying so.
#pragma once

#include "flashrnn/tiling/fused_tiling.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flashrnn {

struct KernelSource {
    std::string name;  // file name for the compiler's messages, e.g. "fused_forward.cu"
    std::string text;  // CUDA C++; sees the traits as the macros FLASHRNN_FUSED_* and struct FusedTraits
    std::string entry; // the kernel: a name expression ("fused_forward", "fused_forward<FusedTraits>")
    // Headers the text includes, as (include name, contents): given to NVRTC in memory, so that a
    // kernel compiles without the library's source tree; part of the cache key.
    std::vector<std::pair<std::string, std::string>> headers;
};

// Where a register report comes from. With a GPU driver present NVRTC may take the cubin from the
// driver's compute cache (~/.nv/ComputeCache) and then writes no ptxas report at all; the report is
// then read from the loaded cubin's attributes, which know registers and local memory (spills and
// stack together) but not spills alone.
enum class RegisterSource { none, ptxas_log, cubin_attributes };

// What the compiler reported for one kernel.
struct RegisterReport {
    int registers_per_thread = 0;
    std::int64_t spill_store_bytes = 0;
    std::int64_t spill_load_bytes = 0;
    std::int64_t stack_frame_bytes = 0; // cubin_attributes: the function's local memory
    RegisterSource source = RegisterSource::ptxas_log;
    friend bool operator==(const RegisterReport&, const RegisterReport&) = default;
};

// Reads the report of the kernel with this (lowered, mangled) name from a ptxas -v log, as NVRTC
// writes it into the program log; nothing when the log has no report for it.
std::optional<RegisterReport> parse_ptxas_report(std::string_view log, std::string_view lowered_name);

struct CompiledKernel {
    std::string architecture; // "sm_90"
    std::string lowered_name; // the entry's mangled name in the cubin
    std::vector<char> cubin;
    std::string log; // the compiler's log (ptxas -v included)
    RegisterReport registers;
    bool from_cache = false;
    std::string cache_key;
};

// Where NVRTC looks for the CUDA toolkit's headers (cuda_fp16.h, cuda_bf16.h), in order: the folders of
// FLASHRNN_CUDA_INCLUDE_DIRS (':'-separated), $CUDA_HOME/include, $CUDA_PATH/include, the build
// machine's toolkit, /usr/local/cuda/include; those that exist, each once. Read at every compile, so
// an installed library or wheel finds the toolkit of the machine it runs on.
std::vector<std::string> nvrtc_include_dirs();

struct CompileOptions {
    std::vector<std::string> include_dirs;  // besides the CUDA toolkit's (nvrtc_include_dirs())
    std::vector<std::string> extra_options; // passed to NVRTC as they are
    bool use_cache = true;
    std::optional<std::filesystem::path> cache_dir; // default: default_kernel_cache_dir()
};

// The library's fused forward or backward kernel (entry "fused_forward" / "fused_backward"), with
// the headers it includes, as embedded in the library at build time.
KernelSource fused_kernel_source(FusedPass pass);

// $FLASHRNN_CACHE_DIR, else $XDG_CACHE_HOME/flashrnn, else $HOME/.cache/flashrnn.
std::filesystem::path default_kernel_cache_dir();

// "13.0": the NVRTC the library uses (part of every cache key).
std::string nvrtc_version();

// Compiles (or finds in the cache) the kernel for these traits and an architecture "sm_XY" or
// "sm_XYa". Throws DeviceError with the compiler's log when the source does not compile.
CompiledKernel compile_fused_kernel(const KernelSource& source, const FusedKernelTraits& traits,
                                    std::string_view architecture, const CompileOptions& options = {});

// The architecture of a compute capability: 90 -> "sm_90".
std::string architecture_of(int compute_capability);

// The feedback for the tiling model from a compiled kernel's register report (spills: the ptxas
// spill stores, or for a report from cubin attributes the local memory).
KernelFeedback register_feedback(const FusedKernelTraits& traits, const CompiledKernel& kernel);

// On a GPU: loads the cubin into the current context and reads registers per thread and local
// memory (spilled or stack bytes) from the function's attributes. Throws without a usable GPU.
RegisterReport registers_from_cubin(const CompiledKernel& kernel);

// The cache of compiled kernels: one file per key, written to a temporary file in the same folder
// and renamed into place (atomic for concurrent processes), validated on read by a header and a
// checksum; a missing, truncated or corrupt file is a miss.
class KernelCache {
  public:
    explicit KernelCache(std::filesystem::path dir);

    const std::filesystem::path& dir() const { return dir_; }
    std::filesystem::path path_of(const std::string& key) const;
    std::optional<CompiledKernel> load(const std::string& key) const;
    // Throws DeviceError naming the file when the folder cannot be written.
    void store(const std::string& key, const CompiledKernel& kernel) const;

  private:
    std::filesystem::path dir_;
};

} // namespace flashrnn

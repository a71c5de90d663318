// The NVRTC path on a GPU: what the loaded cubin says about registers agrees with the compiler's report.
#include <doctest/doctest.h>

#if FLASHRNN_WITH_CUDA

#include "cuda/fused/fused_compiler.hpp"
#include "flashrnn/tiling/device_limits.hpp"
#include "nvrtc_test_support.hpp"

using namespace flashrnn;
using namespace flashrnn::testing;

TEST_CASE("nvrtc: on a GPU, the cubin's attributes agree with the ptxas report") {
    TemporaryFolder folder;
    const std::string architecture = architecture_of(device_limits_of(0).compute_capability());
    const CompiledKernel kernel =
        compile_fused_kernel(kTraitsProbe, lstm_traits(), architecture, in_folder(folder.path));
    const RegisterReport loaded = registers_from_cubin(kernel);
    CHECK(loaded.source == RegisterSource::cubin_attributes);
    CHECK(loaded.registers_per_thread == kernel.registers.registers_per_thread);
}

#endif

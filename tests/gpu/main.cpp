// The GPU tests' entry point: without a CUDA device (or without FlashRNN's CUDA kernels) it says so
// and exits with 77, which ctest reports as "Skipped" (SKIP_RETURN_CODE), so a machine without a GPU
// shows the skip instead of a silent pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "flashrnn/core/stream.hpp"

int main(int argc, char** argv) {
    if (!flashrnn::cuda_device_available()) {
        std::printf("GPU tests SKIPPED: no CUDA device present (or FlashRNN built without CUDA). "
                    "They run on a GPU machine: tests/gpu/run.sh\n");
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}

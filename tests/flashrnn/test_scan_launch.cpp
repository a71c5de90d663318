// The scans' launch model: on every preset and for every scan kernel, the chosen configuration is a
// compiled one and respects the device; vector access only on aligned rows; the tile variant's tile
// holds the sequence; impossible requests are refused with the reason.
#include "flashrnn/core/error.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace flashrnn;

namespace {

constexpr ScanKernel kKernels[] = {ScanKernel::linrec_forward, ScanKernel::linrec_backward,
                                   ScanKernel::rglru_forward, ScanKernel::rglru_backward};

} // namespace

TEST_CASE("scan launch: every preset, kernel, length and dtype gets a compiled configuration") {
    for (std::string_view name : preset_names()) {
        const DeviceLimits limits = preset(name);
        for (ScanKernel kernel : kKernels)
            for (std::int64_t length :
                 {1LL, 2LL, 16LL, 31LL, 33LL, 512LL, 1024LL, 4097LL, 65536LL, 1LL << 20, 2147483647LL})
                for (int bytes : {2, 4})
                    for (bool aligned : {false, true}) {
                        CAPTURE(name);
                        CAPTURE(to_string(kernel));
                        CAPTURE(length);
                        CAPTURE(bytes);
                        CAPTURE(aligned);
                        const ScanConfig c =
                            choose_scan_config(limits, kernel, {13200, length, bytes, aligned, false});
                        CHECK(is_compiled(kernel, c));
                        CHECK(c.threads_per_block <= limits.max_threads_per_block);
                        CHECK(c.threads_per_block % limits.warp_size == 0);
                        if (!aligned) CHECK(c.access != ScanAccess::vector);
                        if (c.access == ScanAccess::vector) CHECK(c.elements_per_thread * bytes % 16 == 0);
                        const std::int64_t tile = std::int64_t{c.elements_per_thread} * c.threads_per_block;
                        CHECK((c.threads_per_block == limits.warp_size || tile < 2 * length));
                    }
    }
}

TEST_CASE("scan launch: the measured preferences (H100)") {
    const DeviceLimits h100 = preset("h100");
    // fp32 forward, long rows: shared access, 8 elements (32 bytes) per thread, tile 2048.
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 65536, 4, true, false}) ==
          ScanConfig{8, 256, ScanAccess::shared});
    // backward: 16 bytes per thread in fp32; bf16: 32 bytes per thread, one warp per row up to
    // L = 1024, tiles of 2048 from 4096, the largest the registers allow (16 x 256) at 65536.
    CHECK(choose_scan_config(h100, ScanKernel::linrec_backward, {13200, 65536, 4, true, false}) ==
          ScanConfig{4, 512, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_backward, {13200, 1024, 2, true, false}) ==
          ScanConfig{16, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_backward, {13200, 4096, 2, true, false}) ==
          ScanConfig{16, 128, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_backward, {13200, 65536, 2, true, false}) ==
          ScanConfig{16, 256, ScanAccess::shared});
    // RG-LRU: 32 bytes per thread where compiled (fp32 forward 8 x 256, backward tiles of 1024), bf16
    // one warp per row up to L = 4096, 8 x 256 from L = 16384.
    CHECK(choose_scan_config(h100, ScanKernel::rglru_forward, {13200, 65536, 4, true, false}) ==
          ScanConfig{8, 256, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_forward, {13200, 4096, 2, true, false}) ==
          ScanConfig{8, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_forward, {13200, 65536, 2, true, false}) ==
          ScanConfig{8, 256, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_backward, {13200, 65536, 4, true, false}) ==
          ScanConfig{8, 128, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_backward, {13200, 4096, 2, true, false}) ==
          ScanConfig{8, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_backward, {13200, 65536, 2, true, false}) ==
          ScanConfig{8, 256, ScanAccess::shared});
    // Rows shorter than a warp's tile: at most length / 32 elements per thread (at least 4).
    CHECK(choose_scan_config(h100, ScanKernel::linrec_backward, {13200, 256, 2, true, false}) ==
          ScanConfig{8, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 512, 2, true, false}) ==
          ScanConfig{16, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 64, 4, true, false}) ==
          ScanConfig{4, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_backward, {13200, 64, 2, true, false}) ==
          ScanConfig{4, 32, ScanAccess::shared});
    // bf16 forward: 16 x 32 up to L = 1024, 16 x 128 from 4096, 16 x 256 from 16384, 16 x 512 from
    // 65536 (its registers, 16-bit elements packed two to a register, just fit the block's limit).
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 1024, 2, true, false}) ==
          ScanConfig{16, 32, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 4096, 2, true, false}) ==
          ScanConfig{16, 128, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 16384, 2, true, false}) ==
          ScanConfig{16, 256, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_forward, {13200, 16384, 2, true, false}) ==
          ScanConfig{8, 256, ScanAccess::shared});
    CHECK(choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 65536, 2, false, false}) ==
          ScanConfig{16, 512, ScanAccess::shared});
    // short rows: one warp.
    CHECK(
        choose_scan_config(h100, ScanKernel::linrec_forward, {13200, 16, 4, true, false}).threads_per_block ==
        32);
}

TEST_CASE("scan launch: the tile variant holds the whole sequence, or says why it cannot") {
    const DeviceLimits h100 = preset("h100_sxm");
    for (std::int64_t length : {1LL, 100LL, 1000LL, 4096LL}) {
        const ScanConfig c =
            choose_scan_config(h100, ScanKernel::linrec_backward, {10, length, 2, true, true});
        CHECK(std::int64_t{c.elements_per_thread} * c.threads_per_block >= length);
    }
    CHECK_THROWS_AS(choose_scan_config(h100, ScanKernel::linrec_forward, {10, 100000, 4, true, true}),
                    TilingError);
    try {
        choose_scan_config(h100, ScanKernel::linrec_forward, {10, 100000, 4, true, true});
    } catch (const TilingError& e) {
        CHECK(std::string(e.what()).find("the tile variant holds the whole sequence") != std::string::npos);
    }
}

TEST_CASE("scan launch: bad problems are refused with the value") {
    const DeviceLimits a100 = preset("a100");
    CHECK_THROWS_WITH_AS(choose_scan_config(a100, ScanKernel::linrec_forward, {0, 10, 4, true, false}),
                         doctest::Contains("got 0 sequences of length 10"), ShapeError);
    CHECK_THROWS_AS(choose_scan_config(a100, ScanKernel::linrec_forward, {1, 0, 4, true, false}), ShapeError);
    CHECK_THROWS_AS(choose_scan_config(a100, ScanKernel::linrec_forward, {1, 2147483648LL, 4, true, false}),
                    ShapeError);
    CHECK_THROWS_WITH_AS(choose_scan_config(a100, ScanKernel::linrec_forward, {1, 10, 8, true, false}),
                         doctest::Contains("got 8"), ShapeError);
}

TEST_CASE("scan launch: the answer does not depend on the number of sequences, which is still checked") {
    const DeviceLimits h100 = preset("h100");
    const ScanConfig few = choose_scan_config(h100, ScanKernel::rglru_backward, {6, 3000, 2, true, false});
    CHECK(choose_scan_config(h100, ScanKernel::rglru_backward, {123456, 3000, 2, true, false}) == few);
    // The same problem with no sequences is refused, although the answer for its length is cached.
    CHECK_THROWS_WITH_AS(choose_scan_config(h100, ScanKernel::rglru_backward, {0, 3000, 2, true, false}),
                         doctest::Contains("got 0 sequences of length 3000"), ShapeError);
}

TEST_CASE("scan launch: names and descriptions") {
    CHECK(parse_scan_kernel("rglru_backward") == ScanKernel::rglru_backward);
    CHECK_THROWS_AS(parse_scan_kernel("linrec"), UnsupportedError);
    CHECK(describe(ScanConfig{8, 256, ScanAccess::vector}) ==
          "8 elements per thread x 256 threads (tile 2048), vector access");
    CHECK(is_compiled(ScanKernel::linrec_forward, {16, 512, ScanAccess::shared}));
    CHECK_FALSE(is_compiled(ScanKernel::rglru_forward, {16, 512, ScanAccess::shared}));
    CHECK(tensors_moved(ScanKernel::linrec_forward) == 3);
    CHECK(tensors_moved(ScanKernel::linrec_backward) == 5);
}

TEST_CASE("scan launch: the Newton reduction's grid level") {
    const DeviceLimits h100 = preset("h100");
    for (ScanKernel kernel : {ScanKernel::newton_reduce_diagonal, ScanKernel::newton_reduce_2x2})
        for (std::int64_t sequences : {1LL, 7LL, 256LL, 100000LL})
            for (std::int64_t length : {1LL, 2LL, 33LL, 4097LL, 65537LL, 1LL << 22})
                for (int bytes : {2, 4}) {
                    CAPTURE(to_string(kernel));
                    CAPTURE(sequences);
                    CAPTURE(length);
                    CAPTURE(bytes);
                    const ReductionLaunch launch =
                        choose_reduction_launch(h100, kernel, {sequences, length, bytes, false, false});
                    CHECK(is_compiled(kernel, launch.config));
                    const std::int64_t tile =
                        std::int64_t{launch.config.elements_per_thread} * launch.config.threads_per_block;
                    CHECK(launch.segment_length % tile == 0);
                    CHECK(launch.segments >= 1);
                    CHECK(launch.segments <= kReductionMaxSegments);
                    // The segments cover the row, none of them empty.
                    CHECK(launch.segments * launch.segment_length >= length);
                    CHECK((launch.segments - 1) * launch.segment_length < length);
                    if (launch.segments == 1) {
                        CHECK(launch.workspace_bytes == 0);
                    } else {
                        const auto entries = static_cast<std::size_t>(sequences * launch.segments);
                        CHECK(launch.entering_offset >= entries * launch.map_words * 4);
                        CHECK(launch.entering_offset % 256 == 0);
                        CHECK(launch.workspace_bytes ==
                              launch.entering_offset + entries * launch.state_words * 4);
                    }
                }
    // Many sequences fill the GPU with one block each; one long sequence is cut into segments.
    CHECK(
        choose_reduction_launch(h100, ScanKernel::newton_reduce_diagonal, {100000, 1 << 22, 4, false, false})
            .segments == 1);
    const ReductionLaunch one =
        choose_reduction_launch(h100, ScanKernel::newton_reduce_2x2, {1, 1 << 22, 4, false, false});
    CHECK(one.segments >= h100.sm_count);
    CHECK(one.map_words == 6);
    CHECK(one.state_words == 2);
    CHECK_THROWS_AS(choose_reduction_launch(h100, ScanKernel::linrec_forward, {1, 16, 4, false, false}),
                    ShapeError);
    CHECK(parse_scan_kernel("newton_reduce_2x2") == ScanKernel::newton_reduce_2x2);
}

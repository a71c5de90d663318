// Device presets (no GPU needed) and, where a GPU is present, the live query.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/tiling/device_limits.hpp"

using namespace flashrnn;

TEST_CASE("presets carry the documented limits") {
    const DeviceLimits h100 = preset("h100_sxm");
    CHECK(h100.compute_capability() == 90);
    CHECK(h100.sm_count == 132);
    CHECK(h100.registers_per_sm == 65536);
    CHECK(h100.max_registers_per_thread == 255);
    CHECK(h100.shared_memory_per_block == 49152);
    CHECK(h100.shared_memory_per_block_optin == 232448); // 227 KiB
    CHECK(h100.shared_memory_per_sm == 233472);          // 228 KiB
    CHECK(h100.max_threads_per_sm == 2048);
    CHECK(h100.max_blocks_per_sm == 32);
    CHECK(h100.has_wgmma());

    const DeviceLimits h200 = preset("h200");
    CHECK(h200.sm_count == 132);
    CHECK(h200.shared_memory_per_block_optin == h100.shared_memory_per_block_optin);
    CHECK(h100.sm_clock == 1.98e9);
    CHECK(h200.sm_clock == h100.sm_clock);

    const DeviceLimits a100 = preset("a100_80gb");
    CHECK(a100.compute_capability() == 80);
    CHECK(a100.sm_count == 108);
    CHECK(a100.shared_memory_per_block_optin == 166912);
    CHECK(a100.sm_clock == 1.41e9);
    CHECK_FALSE(a100.has_wgmma());

    struct Expected {
        std::string_view name;
        int sm_count, blocks_per_sm;
    };
    for (const Expected& expected :
         {Expected{"a40", 84, 16}, Expected{"rtx3090", 82, 16}, Expected{"l4", 58, 24}}) {
        const DeviceLimits limits = preset(expected.name);
        INFO(expected.name);
        CHECK(limits.sm_count == expected.sm_count);
        CHECK(limits.shared_memory_per_block_optin == 101376); // 99 KiB
        CHECK(limits.max_threads_per_sm == 1536);
        CHECK(limits.max_blocks_per_sm == expected.blocks_per_sm);
    }
    CHECK(preset("a40").compute_capability() == 86);
    CHECK(preset("l4").compute_capability() == 89);
}

TEST_CASE("every preset is internally consistent") {
    for (std::string_view name : preset_names()) {
        const DeviceLimits l = preset(name);
        INFO(name);
        CHECK(l.name == name);
        CHECK(l.warp_size == 32);
        CHECK(l.max_threads_per_sm % l.warp_size == 0);
        CHECK(l.max_threads_per_block <= l.max_threads_per_sm);
        CHECK(l.shared_memory_per_block <= l.shared_memory_per_block_optin);
        // The opt-in maximum is the SM's capacity less the driver's reserve for one block.
        CHECK(l.shared_memory_per_block_optin + l.reserved_shared_memory_per_block == l.shared_memory_per_sm);
        CHECK(l.max_registers_per_block <= l.registers_per_sm);
        CHECK(l.l2_cache_bytes > 0);
        CHECK(l.memory_bandwidth > 0);
        CHECK(l.sm_clock > 1e9); // every preset's boost clock is above 1 GHz
    }
}

TEST_CASE("tensor-core shapes per input type") {
    const DeviceLimits h100 = preset("h100_sxm"), a100 = preset("a100_80gb"), l4 = preset("l4");
    CHECK(a100.mma_shape(MmaInput::fp16) == MmaShape{16, 8, 16});
    CHECK(a100.mma_shape(MmaInput::bf16) == MmaShape{16, 8, 16});
    CHECK(a100.mma_shape(MmaInput::tf32) == MmaShape{16, 8, 8});
    CHECK_FALSE(a100.mma_shape(MmaInput::fp8).has_value());
    CHECK(l4.mma_shape(MmaInput::fp8) == MmaShape{16, 8, 32});
    CHECK(h100.mma_shape(MmaInput::fp8) == MmaShape{16, 8, 32});
}

TEST_CASE("an unknown preset lists the valid names") {
    CHECK_THROWS_WITH_AS(
        preset("h800"),
        "flashrnn: unknown device preset 'h800' (valid presets: h100_sxm, h200, a100_80gb, a40, "
        "rtx3090, l4)",
        UnsupportedError);
}

TEST_CASE("the live query reads a GPU or says why it cannot") {
    try {
        const DeviceLimits limits = device_limits_of(0);
        CHECK(limits.sm_count > 0);
        CHECK(limits.warp_size == 32);
        CHECK(limits.shared_memory_per_block_optin >= limits.shared_memory_per_block);
        CHECK(limits.sm_clock > 0);
        MESSAGE("device 0: ", describe(limits));
    } catch (const Error& error) { // DeviceError, or UnsupportedError without CUDA
        CHECK(std::string(error.what()).find("CUDA device 0") != std::string::npos);
        MESSAGE("no GPU query: ", std::string(error.what()));
    }
}

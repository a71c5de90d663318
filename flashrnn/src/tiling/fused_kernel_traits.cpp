// FusedKernelTraits rendered for the compiler (defines, C++ source), the cache (key) and people.
#include "flashrnn/tiling/fused_tiling.hpp"

#include <cctype>

namespace flashrnn {

std::vector<std::pair<std::string, std::int64_t>> FusedKernelTraits::defines() const {
    // The order is the order of the struct; names are stable: kernels and cache keys depend on them.
    return {
        {"FLASHRNN_FUSED_BACKWARD", pass == FusedPass::backward ? 1 : 0},
        {"FLASHRNN_FUSED_CELL", static_cast<std::int64_t>(cell)},
        {"FLASHRNN_FUSED_DTYPE", static_cast<std::int64_t>(dtype)},
        {"FLASHRNN_FUSED_HEAD_DIM", head_dim},
        // The problem's heads and batch: the kernels index their tensors with compile-time sizes.
        {"FLASHRNN_FUSED_HEADS", heads},
        {"FLASHRNN_FUSED_BATCH", batch},
        {"FLASHRNN_FUSED_COMPILE_TIME_SIZES", compile_time_sizes ? 1 : 0},
        {"FLASHRNN_FUSED_NUM_STATES", num_states},
        {"FLASHRNN_FUSED_NUM_GATES", num_gates},
        {"FLASHRNN_FUSED_NUM_RECURRENT_GATES", num_recurrent_gates},
        {"FLASHRNN_FUSED_MMA_M", mma_m},
        {"FLASHRNN_FUSED_MMA_N", mma_n},
        {"FLASHRNN_FUSED_MMA_K", mma_k},
        {"FLASHRNN_FUSED_ELEMENT_BYTES", element_bytes},
        {"FLASHRNN_FUSED_ROWS_PER_UNIT", rows_per_unit},
        {"FLASHRNN_FUSED_ROWS", rows},
        {"FLASHRNN_FUSED_K_LENGTH", k_length},
        {"FLASHRNN_FUSED_BATCH_BLOCKS", batch_blocks},
        {"FLASHRNN_FUSED_BATCH_CHUNKS", batch_chunks},
        {"FLASHRNN_FUSED_CHUNKS_IN_STEP", chunks_in_step ? 1 : 0},
        {"FLASHRNN_FUSED_PREFETCH_OPERAND", prefetch_operand ? 1 : 0},
        {"FLASHRNN_FUSED_ROW_BLOCKS", row_blocks},
        {"FLASHRNN_FUSED_K_BLOCKS", k_blocks},
        {"FLASHRNN_FUSED_COOPERATIVE", cooperative ? 1 : 0},
        {"FLASHRNN_FUSED_TAGGED_EXCHANGE", tagged_exchange ? 1 : 0},
        {"FLASHRNN_FUSED_CLUSTER_EXCHANGE", cluster_exchange ? 1 : 0},
        {"FLASHRNN_FUSED_MULTICAST_GATHER", multicast_gather ? 1 : 0},
        {"FLASHRNN_FUSED_DIRECT_R_LOAD", direct_r_load ? 1 : 0},
        {"FLASHRNN_FUSED_UNITS_PER_BLOCK", units_per_block},
        {"FLASHRNN_FUSED_ROW_TILES_PER_BLOCK", row_tiles_per_block},
        {"FLASHRNN_FUSED_K_TILES_PER_BLOCK", k_tiles_per_block},
        {"FLASHRNN_FUSED_BATCH_TILES_PER_BLOCK", batch_tiles_per_block},
        {"FLASHRNN_FUSED_BATCH_ROWS_PER_BLOCK", batch_rows_per_block},
        {"FLASHRNN_FUSED_ROW_WARPS", row_warps},
        {"FLASHRNN_FUSED_K_WARPS", k_warps},
        {"FLASHRNN_FUSED_THREADS_PER_BLOCK", threads_per_block},
        {"FLASHRNN_FUSED_ROW_TILES_PER_WARP", row_tiles_per_warp},
        {"FLASHRNN_FUSED_K_TILES_PER_WARP", k_tiles_per_warp},
        {"FLASHRNN_FUSED_K_TILES_IN_REGISTERS", k_tiles_in_registers},
        {"FLASHRNN_FUSED_K_TILES_IN_SHARED_MEMORY", k_tiles_in_shared_memory},
        {"FLASHRNN_FUSED_SHARED_MEMORY_BYTES", shared_memory_bytes},
    };
}

std::string FusedKernelTraits::to_source() const {
    std::string text = "// Generated from flashrnn::FusedKernelTraits: " + key() + "\n";
    for (const auto& [name, value] : defines())
        text += "#define " + name + " " + std::to_string(value) + "\n";
    text += "struct FusedTraits {\n";
    constexpr std::string_view prefix = "FLASHRNN_FUSED_";
    for (const auto& [name, value] : defines()) {
        std::string member = name.substr(prefix.size());
        for (char& c : member)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        text += "    static constexpr " +
                std::string(name == "FLASHRNN_FUSED_SHARED_MEMORY_BYTES" ? "long long" : "int") + " " +
                member + " = " + name + ";\n";
    }
    text += "};\n";
    return text;
}

std::vector<std::string> FusedKernelTraits::compiler_options() const {
    std::vector<std::string> options;
    for (const auto& [name, value] : defines())
        options.push_back("-D" + name + "=" + std::to_string(value));
    return options;
}

std::string FusedKernelTraits::key() const {
    std::string text = std::string(to_string(pass)) + "." + std::string(cell_info(cell).name) + "." +
                       std::string(to_string(dtype)) + ".sm" + std::to_string(compute_capability);
    for (const auto& [name, value] : defines())
        text += "." + std::to_string(value);
    return text;
}

std::string describe(const FusedKernelTraits& t) {
    auto line = [](const std::string& what, const std::string& value) {
        return "  " + what + ": " + value + "\n";
    };
    auto s = [](std::int64_t v) { return std::to_string(v); };
    const bool forward = t.pass == FusedPass::forward;
    std::string text = std::string(to_string(t.pass)) + " " + std::string(cell_info(t.cell).name) + " " +
                       std::string(to_string(t.dtype)) + ", NH " + s(t.heads) + ", DH " + s(t.head_dim) +
                       ", B " + s(t.batch) + " (sm_" + s(t.compute_capability) + ")\n";
    text += line("mma", "m" + s(t.mma_m) + "n" + s(t.mma_n) + "k" + s(t.mma_k) +
                            (t.dtype == DType::fp32 ? " (tf32)" : "") + ", fp32 accumulation");
    text += line("product per head", s(t.rows) + (forward ? " gate rows" : " state rows") + " x " +
                                         s(t.k_length) + (forward ? " state columns" : " gate columns") +
                                         " (R" + (forward ? "" : "^T") + ")");
    text +=
        line("grid",
             s(t.launches) + " launch(es) of " + s(t.heads_per_launch) + " heads x " + s(t.batch_blocks) +
                 " batch blocks x " + s(t.row_blocks) + " row blocks x " + s(t.k_blocks) +
                 " k blocks = " + s(t.blocks_per_launch()) + " blocks" +
                 (!t.cooperative       ? ", independent"
                  : t.cluster_exchange ? ", a cluster of " + s(t.row_blocks) +
                                             " blocks per group (each step's operand written into the peers' "
                                             "shared memory)"
                  : t.tagged_exchange  ? ", cooperative (each step's operand exchanged in step-tagged words)"
                  : t.multicast_gather ? ", cooperative (each step's operand exchanged after a barrier, its "
                                         "gather shared by clusters of row blocks)"
                                       : ", cooperative (each step's operand exchanged after a barrier)"));
    text += line(
        "block",
        s(t.threads_per_block) + " threads = " + s(t.row_warps) + " row warps x " + s(t.k_warps) +
            " k warps; " + s(t.units_per_block) + " units, " + s(t.row_tiles_per_block) + " row tiles x " +
            s(t.k_tiles_per_block) + " k tiles, " + s(t.batch_tiles_per_block) + " batch tiles" +
            (t.batch_rows_per_block < t.batch_tiles_per_block * t.mma_n
                 ? " (narrow: " + s(t.batch_rows_per_block) + " batch rows, the tile's " +
                       s(t.batch_tiles_per_block * t.mma_n - t.batch_rows_per_block) + " other columns idle)"
                 : "") +
            (t.batch_chunks <= 1 ? ""
             : t.chunks_in_step  ? " per chunk, " + s(t.batch_chunks) + " chunks in turn inside each step" +
                                      (t.prefetch_operand ? " (the next chunk's operand gathered during "
                                                            "this one's product)"
                                                          : "")
                                : " per chunk, " + s(t.batch_chunks) +
                                      " chunks one after the other (the sequence per chunk)"));
    text += line("warp", s(t.row_tiles_per_warp) + " row tiles x " + s(t.k_tiles_per_warp) +
                             " k tiles of R: " + s(t.k_tiles_in_registers) + " in registers, " +
                             s(t.k_tiles_in_shared_memory) + " in shared memory per row tile" +
                             (!t.direct_r_load ? ""
                              : forward        ? " (loaded by words of two elements)"
                                               : " (loaded by 16-byte pieces and ldmatrix)"));
    text += line("registers per thread (estimate)",
                 s(t.registers_per_thread) + " (" + s(t.r_registers_per_thread) + " for R)");
    text += line("shared memory per block",
                 s(t.shared_memory_bytes) + " bytes (" + s(t.r_shared_memory_bytes) + " for R)");
    return text;
}

} // namespace flashrnn

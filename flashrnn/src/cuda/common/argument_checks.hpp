// The checks at the GPU backends' API boundary: every failure names the call and the argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "flashrnn/alternating.hpp"
#include "flashrnn/tensor_shapes.hpp"

namespace flashrnn::cuda {

// What the backends' errors begin with: "flashrnn::<backend>::<pass>(<cell>, <dtype>)".
inline std::string context_of(const char* backend, const char* pass, Cell cell, DType dtype) {
    return std::string("flashrnn::") + backend + "::" + pass + "(" + std::string(cell_info(cell).name) +
           ", " + std::string(to_string(dtype)) + ")";
}

inline void require(const void* pointer, const std::string& context, const char* name) {
    if (!pointer) throw ShapeError(context + ": " + name + " is null");
}

// The workspace holds fp32 buffers read in packets of up to 16 bytes: it must be large enough and
// 16-byte aligned.
inline void check_workspace(const std::string& context, void* workspace, std::size_t given,
                            std::size_t needed) {
    if (given < needed || (needed > 0 && !workspace))
        throw ShapeError(context + ": the workspace holds " + std::to_string(workspace ? given : 0) +
                         " bytes, it needs " + std::to_string(needed));
    if (reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
        throw ShapeError(context + ": workspace must be 16-byte aligned (cudaMalloc gives 256)");
}

// The gate cache is fp32, read in packets of up to 16 bytes.
inline void require_16_byte_alignment(const void* pointer, const std::string& context, const char* name) {
    if (reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0)
        throw ShapeError(context + ": " + name + " must be 16-byte aligned (cudaMalloc gives 256)");
}

// The tensors both backends' passes need (alternating.hpp's argument structs): present, and the
// gate cache aligned.
inline void require_forward_arguments(const alternating::ForwardArgs& args, const std::string& context) {
    require(args.gate_inputs, context, "gate_inputs");
    require(args.recurrent_weights, context, "recurrent_weights");
    require(args.bias, context, "bias");
    require(args.initial_states, context, "initial_states");
    require(args.states, context, "states");
    require_16_byte_alignment(args.gate_cache, context, "gate_cache");
}

inline void require_backward_arguments(const alternating::BackwardArgs& args, const std::string& context) {
    require(args.recurrent_weights, context, "recurrent_weights");
    require(args.states, context, "states");
    require(args.gate_cache, context, "gate_cache (the forward's, from a call with gate_cache set)");
    require(args.d_gate_inputs, context, "d_gate_inputs");
    require(args.d_recurrent_weights, context, "d_recurrent_weights");
    require(args.d_bias, context, "d_bias");
    require(args.d_initial_states, context, "d_initial_states");
    require_16_byte_alignment(args.gate_cache, context, "gate_cache");
}

} // namespace flashrnn::cuda

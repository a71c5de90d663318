// The alternating backend's pointwise kernels, one launch per time step: the forward step (gate
// pre-activations from Wx, the recurrent products and the bias, then the cell) and the backward step
// (the cell's derivative, then the gradients of the gate inputs and of the previous states). Each
// thread handles `chunks` vectors of V consecutive units (b, h, d..d+V) of one head's row; the
// cell functions are the ones of the CPU reference (flashrnn/cells), evaluated in fp32.
#pragma once

#include <cstdint>

#include "cuda/alternating/step_kernels_params.hpp"
#include "cuda/common/elements.cuh"
#include "cuda/rnn/gate_slots.hpp"
#include "flashrnn/cells/registry.hpp"
#include "flashrnn/rnn/layout.hpp"

namespace flashrnn::alternating {

template <PointwiseCell C, class T, int V> __global__ void forward_step_kernel(const ForwardStep p) {
    constexpr int G = C::num_gates, S = C::num_states, GR = C::num_recurrent_gates;
    const T* wx = static_cast<const T*>(p.gate_inputs);
    const T* bias = static_cast<const T*>(p.bias);
    T* states = static_cast<T*>(p.states);
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t vector = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int chunk = 0; chunk < p.grid.chunks && vector < p.grid.vectors; ++chunk, vector += stride) {
        const UnitGrid::Unit u = p.grid.unit_of(vector, V);
        float pre[G][V];
#pragma unroll
        for (int g = 0; g < G; ++g)
            cuda::load<T, V>(bias + p.bias_layout.offset(g, u.h, u.d), pre[g]);
#pragma unroll
        for (int k = 0; k < C::num_input_gates; ++k)
            cuda::load_add<T, V>(wx + p.input_layout.offset(p.t, u.b, k, u.h, u.d),
                                 pre[C::gate_of_input_row(k)]);
#pragma unroll
        for (int k = 0; k < GR; ++k)
            cuda::load_add<float, V>(p.recurrent + p.grid.slot_offset(u, GR, k),
                                     pre[C::gate_of_recurrent_block(k)]);
        float previous[S][V];
#pragma unroll
        for (int s = 0; s < S; ++s)
            cuda::load<T, V>(states + p.sequence.offset(s, p.t, u.b, u.h, u.d), previous[s]);

        float next[S][V];
#pragma unroll
        for (int l = 0; l < V; ++l) {
            float gates[G], s_prev[S], s_new[S];
#pragma unroll
            for (int g = 0; g < G; ++g)
                gates[g] = pre[g][l];
#pragma unroll
            for (int s = 0; s < S; ++s)
                s_prev[s] = previous[s][l];
            C::forward(gates, s_prev, s_new);
#pragma unroll
            for (int s = 0; s < S; ++s)
                next[s][l] = s_new[s];
        }

#pragma unroll
        for (int s = 0; s < S; ++s)
            cuda::store<T, V>(states + p.sequence.offset(s, p.t + 1, u.b, u.h, u.d), next[s]);
        if (p.last_state && p.t + 1 == p.sequence.time_steps) {
#pragma unroll
            for (int s = 0; s < S; ++s)
                cuda::store<T, V>(static_cast<T*>(p.last_state) + p.single.offset(s, u.b, u.h, u.d), next[s]);
        }
        if (p.gate_cache) {
            float* cache = p.gate_cache + p.t * p.grid.batch * p.grid.heads * G * p.grid.head_dim;
#pragma unroll
            for (int slot = 0; slot < G; ++slot)
                cuda::store<float, V>(cache + p.grid.slot_offset(u, G, slot), pre[gate_of_slot<C>(slot)]);
        }
    }
}

template <PointwiseCell C, class T, int V> __global__ void backward_step_kernel(const BackwardStep p) {
    constexpr int G = C::num_gates, S = C::num_states;
    const T* states = static_cast<const T*>(p.states);
    const T* d_states = static_cast<const T*>(p.d_states);
    const T* d_last = static_cast<const T*>(p.d_last_state);
    const std::int64_t step_units = p.grid.batch * p.grid.heads * p.grid.head_dim;
    const float* cache = p.gate_cache + (p.t - 1) * step_units * G;
    T* d_gates_out = static_cast<T*>(p.d_gates) + (p.t - 1) * step_units * G;
    const bool last_step = p.t == p.sequence.time_steps;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t vector = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int chunk = 0; chunk < p.grid.chunks && vector < p.grid.vectors; ++chunk, vector += stride) {
        const UnitGrid::Unit u = p.grid.unit_of(vector, V);
        float pre[G][V], previous[S][V], next[S][V], upstream[S][V];
#pragma unroll
        for (int slot = 0; slot < G; ++slot)
            cuda::load<float, V>(cache + p.grid.slot_offset(u, G, slot), pre[gate_of_slot<C>(slot)]);
#pragma unroll
        for (int s = 0; s < S; ++s) {
            cuda::load<T, V>(states + p.sequence.offset(s, p.t - 1, u.b, u.h, u.d), previous[s]);
            cuda::load<T, V>(states + p.sequence.offset(s, p.t, u.b, u.h, u.d), next[s]);
            if (last_step) {
#pragma unroll
                for (int l = 0; l < V; ++l)
                    upstream[s][l] = 0.0f;
            } else {
                cuda::load<float, V>(p.carry + p.single.offset(s, u.b, u.h, u.d), upstream[s]);
            }
            if (d_states)
                cuda::load_add<T, V>(d_states + p.sequence.offset(s, p.t, u.b, u.h, u.d), upstream[s]);
            if (d_last && last_step)
                cuda::load_add<T, V>(d_last + p.single.offset(s, u.b, u.h, u.d), upstream[s]);
        }
        if (p.through_r) {
            float through_r[V];
            cuda::load<float, V>(p.through_r + p.grid.slot_offset(u, p.through_r_parts, 0), through_r);
            for (int part = 1; part < p.through_r_parts; ++part)
                cuda::load_add<float, V>(p.through_r + p.grid.slot_offset(u, p.through_r_parts, part),
                                         through_r);
#pragma unroll
            for (int l = 0; l < V; ++l)
                upstream[0][l] += p.policy.apply(through_r[l]);
        }

        float d_pre[G][V], d_previous[S][V];
#pragma unroll
        for (int l = 0; l < V; ++l) {
            float gates[G], s_prev[S], s_new[S], ds_new[S], d_gate[G], ds_prev[S];
#pragma unroll
            for (int g = 0; g < G; ++g)
                gates[g] = pre[g][l];
#pragma unroll
            for (int s = 0; s < S; ++s) {
                s_prev[s] = previous[s][l];
                s_new[s] = next[s][l];
                ds_new[s] = upstream[s][l];
            }
            C::backward(gates, s_prev, s_new, ds_new, d_gate, ds_prev);
#pragma unroll
            for (int g = 0; g < G; ++g)
                d_pre[g][l] = d_gate[g];
#pragma unroll
            for (int s = 0; s < S; ++s)
                d_previous[s][l] = ds_prev[s];
        }

        T* d_inputs = static_cast<T*>(p.d_gate_inputs);
#pragma unroll
        for (int k = 0; k < C::num_input_gates; ++k)
            cuda::store<T, V>(d_inputs + p.input_layout.offset(p.t - 1, u.b, k, u.h, u.d),
                              d_pre[C::gate_of_input_row(k)]);
#pragma unroll
        for (int slot = 0; slot < G; ++slot)
            cuda::store<T, V>(d_gates_out + p.grid.slot_offset(u, G, slot), d_pre[gate_of_slot<C>(slot)]);
#pragma unroll
        for (int s = 0; s < S; ++s)
            cuda::store<float, V>(p.carry + p.single.offset(s, u.b, u.h, u.d), d_previous[s]);
    }
}

template <class T> __global__ void initial_states_gradient_kernel(const InitialStatesGradient p) {
    const std::int64_t units = p.grid.vectors;
    const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= units * p.num_states) return;
    const int s = static_cast<int>(index / units);
    const UnitGrid::Unit u = p.grid.unit_of(index % units, 1);
    float gradient = p.carry[p.single.offset(s, u.b, u.h, u.d)];
    if (s == 0 && p.through_r) {
        float through_r = 0.0f;
        for (int part = 0; part < p.through_r_parts; ++part)
            through_r += p.through_r[p.grid.slot_offset(u, p.through_r_parts, part)];
        gradient += p.policy.apply(through_r);
    }
    if (p.d_states)
        gradient += cuda::to_float(static_cast<const T*>(p.d_states)[p.sequence.offset(s, 0, u.b, u.h, u.d)]);
    static_cast<T*>(p.d_initial_states)[p.single.offset(s, u.b, u.h, u.d)] = cuda::from_float<T>(gradient);
}

} // namespace flashrnn::alternating

// The Newton family's element-wise kernels (passes.cu launches them). Layouts as in
// newton/problem.hpp: a tensor [C, B, D, T] is C planes of `sequences` rows of T values (sequence
// s = b D + d), indexed through Rows; the solver's own fp32 buffers (the iterate, Jacobians,
// residuals) have the same layout. The cells' math is their headers' (cells/flash_gru.hpp,
// cells/flash_lstm.hpp), in fp32.
#pragma once

#include <cstdint>

#include "cuda/common/elements.cuh"
#include "cuda/newton/rows.cuh"
#include "flashrnn/newton/cells.hpp"

namespace flashrnn::cuda::newton {

constexpr int kElementThreads = 256;

// The inputs of one step of one sequence, in fp32.
template <class C> struct StepInputs {
    float x[C::num_gates];
    float p[C::num_parameters];
};

template <class C, class T>
__device__ __forceinline__ StepInputs<C> load_step(const T* inputs, const float* parameters, const Rows& rows,
                                                   std::int64_t s, std::int64_t t) {
    StepInputs<C> in;
#pragma unroll
    for (int g = 0; g < C::num_gates; ++g)
        in.x[g] = to_float(inputs[rows.at(g, s, t)]);
#pragma unroll
    for (int k = 0; k < C::num_parameters; ++k)
        in.p[k] = parameters[rows.parameter_at(k, s)];
    return in;
}

// The state before step t: the iterate (or the states tensor) at t - 1, the initial state at t = 0.
template <int S, class T>
__device__ __forceinline__ void load_previous(const T* states, const float* initial_state, const Rows& rows,
                                              std::int64_t s, std::int64_t t, float (&previous)[S]) {
#pragma unroll
    for (int k = 0; k < S; ++k)
        previous[k] = t > 0 ? to_float(states[rows.at(k, s, t - 1)])
                            : (initial_state ? initial_state[rows.state_at(k, s)] : 0.0f);
}

// ---- Newton forward --------------------------------------------------------------------------------

template <class T> struct ForwardParams {
    const T* inputs;
    const float* parameters;
    const float* initial_state;  // may be null
    float* iterate;              // [S, sequences, T] fp32
    float* jacobians;            // [S*S, sequences, T] fp32
    float* residuals;            // [S, sequences, T] fp32
    T* states;                   // out (last evaluation)
    float* last_state;           // out, may be null
    unsigned* sequence_residual; // [sequences], with a tolerance (else null)
    unsigned* sequence_state;    // [sequences]
    Counters* counters;
    Rows rows;
};

// Eq. 10: h_t = f(0, x_t), h_1 = f(h_0, x_1).
template <class C, class T>
__global__ void __launch_bounds__(kElementThreads) initial_guess_kernel(const ForwardParams<T> p) {
    constexpr int S = C::num_states;
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kElementThreads + threadIdx.x;
    if (i >= p.rows.sequences * p.rows.length) return;
    const std::int64_t s = i / p.rows.length, t = i % p.rows.length;
    const StepInputs<C> in = load_step<C>(p.inputs, p.parameters, p.rows, s, t);
    float previous[S] = {}, next[S];
    if (t == 0 && p.initial_state)
#pragma unroll
        for (int k = 0; k < S; ++k)
            previous[k] = p.initial_state[p.rows.state_at(k, s)];
    C::forward(in.x, in.p, previous, next);
#pragma unroll
    for (int k = 0; k < S; ++k)
        p.iterate[p.rows.at(k, s, t)] = next[k];
}

// The residuals r_t = f(h_{t-1}, x_t) - h_t and Jacobians at the iterate (or, in the last evaluation,
// the states out), their maxima per sequence (with a tolerance) and overall (last evaluation), and
// the non-finite flag.
template <class C, class T, bool kLast>
__global__ void __launch_bounds__(kElementThreads) evaluate_kernel(const ForwardParams<T> p) {
    constexpr int S = C::num_states;
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kElementThreads + threadIdx.x;
    const bool valid = i < p.rows.sequences * p.rows.length;
    const std::int64_t s = valid ? i / p.rows.length : -1, t = valid ? i % p.rows.length : 0;
    float residual_max = 0.0f, state_max = 0.0f;
    bool finite = true;
    if (valid) {
        const StepInputs<C> in = load_step<C>(p.inputs, p.parameters, p.rows, s, t);
        float previous[S], current[S], next[S], jacobian[S * S];
        load_previous<S>(p.iterate, p.initial_state, p.rows, s, t, previous);
#pragma unroll
        for (int k = 0; k < S; ++k)
            current[k] = p.iterate[p.rows.at(k, s, t)];
        C::step(in.x, in.p, previous, next, jacobian);
#pragma unroll
        for (int k = 0; k < S; ++k) {
            const float r = next[k] - current[k];
            finite = finite && isfinite(r);
            residual_max = fmaxf(residual_max, fabsf(r));
            state_max = fmaxf(state_max, fabsf(current[k]));
            if constexpr (kLast) {
                p.states[p.rows.at(k, s, t)] = from_float<T>(current[k]);
                if (p.last_state && t == p.rows.length - 1) p.last_state[p.rows.state_at(k, s)] = current[k];
            } else {
                p.residuals[p.rows.at(k, s, t)] = r;
            }
        }
        if constexpr (!kLast)
#pragma unroll
            for (int k = 0; k < S * S; ++k)
                p.jacobians[p.rows.at(k, s, t)] = jacobian[k];
        if (!finite) atomicOr(&p.counters->non_finite, 1u);
        if (!isfinite(state_max)) state_max = 0.0f;
    }
    if (p.sequence_residual) { // a sequence with a non-finite residual never meets the tolerance
        const std::int64_t key = valid ? s : -1;
        atomic_max_by_key(p.sequence_residual + (valid ? s : 0), key,
                          __float_as_uint(finite ? residual_max : INFINITY), valid);
        atomic_max_by_key(p.sequence_state + (valid ? s : 0), key, __float_as_uint(state_max), valid);
    }
    if constexpr (kLast) // the statistic is the largest finite residual (the flag tells the rest)
        atomic_max_by_key(&p.counters->max_residual_bits, 0, __float_as_uint(finite ? residual_max : 0.0f),
                          valid);
}

// With a tolerance, after each evaluation: a sequence that meets it is marked with the iterations it
// took (met_at >= 0, then its iterate no longer changes); its maxima are reset for the next one.
__global__ void conclude_kernel(int* met_at, unsigned* sequence_residual, unsigned* sequence_state,
                                std::int64_t sequences, float absolute, float relative, int iterations) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= sequences) return;
    const float residual = __uint_as_float(sequence_residual[s]), state = __uint_as_float(sequence_state[s]);
    if (met_at[s] < 0 && residual <= absolute + relative * state) met_at[s] = iterations;
    sequence_residual[s] = 0;
    sequence_state[s] = 0;
}

// The statistics slots (newton/problem.hpp): one block.
__global__ void statistics_kernel(float* statistics, const Counters* counters, const int* met_at,
                                  std::int64_t sequences, int max_iterations) {
    __shared__ int most[32], all_met[32];
    int iterations = met_at ? 0 : max_iterations, met = met_at ? 1 : 0;
    if (met_at)
        for (std::int64_t s = threadIdx.x; s < sequences; s += blockDim.x) {
            iterations = max(iterations, met_at[s] >= 0 ? met_at[s] : max_iterations);
            met = met && met_at[s] >= 0;
        }
#pragma unroll
    for (int delta = 16; delta > 0; delta /= 2)
        iterations = max(iterations, __shfl_xor_sync(kFullWarp, iterations, delta));
    // Every lane votes: a shuffle behind `met &&` was skipped by the lanes whose sequences missed the
    // tolerance while the others waited for them in it (a hang whenever a warp held both).
    met = __all_sync(kFullWarp, met);
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) most[warp] = iterations, all_met[warp] = met;
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int w = 0; w < warps; ++w)
        iterations = max(iterations, most[w]), met = met && all_met[w];
    statistics[0] = static_cast<float>(iterations);
    statistics[1] = counters ? __uint_as_float(counters->max_residual_bits) : 0.0f;
    statistics[2] = met ? 1.0f : 0.0f;
    statistics[3] = counters && counters->non_finite ? 1.0f : 0.0f;
}

// ---- Newton backward ---------------------------------------------------------------------------------

template <class T> struct BackwardParams {
    const T* inputs;
    const float* parameters;
    const float* initial_state;
    const T* states;
    const T* d_states;         // may be null
    const float* d_last_state; // may be null
    float* transposed;         // [S*S, sequences, T]: row t holds J_{t+1}^T (zero at T-1)
    float* carries;            // [S, sequences, T]: the right-hand sides, then (in place) g
    T* d_inputs;
    float* d_parameters;    // zeroed before, accumulated
    float* d_initial_state; // may be null
    Rows rows;
};

// Eq. 6's system: right-hand sides d_t (+ d_last_state at T - 1) and the transposed Jacobians.
template <class C, class T>
__global__ void __launch_bounds__(kElementThreads) backward_system_kernel(const BackwardParams<T> p) {
    constexpr int S = C::num_states;
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kElementThreads + threadIdx.x;
    if (i >= p.rows.sequences * p.rows.length) return;
    const std::int64_t s = i / p.rows.length, t = i % p.rows.length;
    const bool last = t == p.rows.length - 1;
#pragma unroll
    for (int k = 0; k < S; ++k) {
        float d = p.d_states ? to_float(p.d_states[p.rows.at(k, s, t)]) : 0.0f;
        if (last && p.d_last_state) d += p.d_last_state[p.rows.state_at(k, s)];
        p.carries[p.rows.at(k, s, t)] = d;
    }
    float jacobian[S * S] = {};
    if (!last) {
        const StepInputs<C> in = load_step<C>(p.inputs, p.parameters, p.rows, s, t + 1);
        float current[S], unused[S];
#pragma unroll
        for (int k = 0; k < S; ++k)
            current[k] = to_float(p.states[p.rows.at(k, s, t)]);
        C::step(in.x, in.p, current, unused, jacobian);
    }
#pragma unroll
    for (int a = 0; a < S; ++a)
#pragma unroll
        for (int b = 0; b < S; ++b)
            p.transposed[p.rows.at(a * S + b, s, t)] = jacobian[b * S + a];
}

// Per step, the cell's gradients at g_t: the inputs', the parameters' (summed with atomics) and, at
// t = 0, the initial state's.
template <class C, class T>
__global__ void __launch_bounds__(kElementThreads) backward_gradients_kernel(const BackwardParams<T> p) {
    constexpr int S = C::num_states;
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kElementThreads + threadIdx.x;
    const bool valid = i < p.rows.sequences * p.rows.length;
    const std::int64_t s = valid ? i / p.rows.length : 0, t = valid ? i % p.rows.length : 0;
    float d_p[C::num_parameters] = {};
    if (valid) {
        const StepInputs<C> in = load_step<C>(p.inputs, p.parameters, p.rows, s, t);
        float previous[S], g[S], d_x[C::num_gates], d_previous[S];
        load_previous<S>(p.states, p.initial_state, p.rows, s, t, previous);
#pragma unroll
        for (int k = 0; k < S; ++k)
            g[k] = p.carries[p.rows.at(k, s, t)];
        C::backward(in.x, in.p, previous, g, d_x, d_p, d_previous);
#pragma unroll
        for (int k = 0; k < C::num_gates; ++k)
            p.d_inputs[p.rows.at(k, s, t)] = from_float<T>(d_x[k]);
        if (t == 0 && p.d_initial_state)
#pragma unroll
            for (int k = 0; k < S; ++k)
                p.d_initial_state[p.rows.state_at(k, s)] = d_previous[k];
    }
    const std::int64_t unit = s % p.rows.units;
#pragma unroll
    for (int k = 0; k < C::num_parameters; ++k)
        atomic_add_by_key(p.d_parameters + k * p.rows.units + unit, valid ? unit : -1, d_p[k], valid);
}

// ---- Statistics of the other backends ----------------------------------------------------------------

// The fused forward's statistics slots from its counters: without a tolerance every tile ran
// max_iterations; with one, the most any tile ran and whether every tile met it.
__global__ void fused_statistics_kernel(float* statistics, const Counters* counters, int max_iterations,
                                        bool tolerance) {
    statistics[0] =
        static_cast<float>(tolerance ? static_cast<int>(counters->most_iterations) : max_iterations);
    statistics[1] = __uint_as_float(counters->max_residual_bits);
    statistics[2] = tolerance && counters->unmet == 0 ? 1.0f : 0.0f;
    statistics[3] = counters->non_finite ? 1.0f : 0.0f;
}

// The sequential forward's statistics before it runs: no iterations, no residual, the tolerance met.
__global__ void sequential_statistics_kernel(float* statistics, bool tolerance) {
    statistics[0] = 0.0f;
    statistics[1] = 0.0f;
    statistics[2] = tolerance ? 1.0f : 0.0f;
    statistics[3] = 0.0f;
}

} // namespace flashrnn::cuda::newton

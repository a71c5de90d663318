// A cell header's functions evaluated with the number type ActivationFloat<A> (activation_float.cuh)
// on the kernels' float arrays: the one source of the math stays the cell header, the activations are
// the kernel's choice. The fused Newton forward takes the cheap ones in its early iterations and the
// accurate ones (exp and a reciprocal, absolute error about 1e-7) where the result is decided; the
// sequential kernels take the accurate ones in every step.
#pragma once

#include "cuda/newton/activation_float.cuh"

namespace flashrnn::cuda::newton {

// Cell C's step evaluated with the activations A (activation_float.cuh): the new state, and for
// cell_step its Jacobian with respect to the previous state (row-major S x S).
template <class C, Activations A>
__device__ __forceinline__ void
cell_forward(const float (&inputs)[C::num_gates], const float (&params)[C::num_parameters],
             const float (&previous)[C::num_states], float (&next)[C::num_states]) {
    using Number = ActivationFloat<A>;
    Number in[C::num_gates], par[C::num_parameters], prev[C::num_states], out[C::num_states];
    copy_into(in, inputs);
    copy_into(par, params);
    copy_into(prev, previous);
    C::forward(in, par, prev, out);
    copy_out(next, out);
}
// Cell C's step from a zero state (Newton's initial guess) with the activations A.
template <class C, Activations A>
__device__ __forceinline__ void cell_forward_from_zero(const float (&inputs)[C::num_gates],
                                                       const float (&params)[C::num_parameters],
                                                       float (&next)[C::num_states]) {
    using Number = ActivationFloat<A>;
    Number in[C::num_gates], par[C::num_parameters], out[C::num_states];
    copy_into(in, inputs);
    copy_into(par, params);
    C::forward_from_zero(in, par, out);
    copy_out(next, out);
}
template <class C, Activations A>
__device__ __forceinline__ void
cell_step(const float (&inputs)[C::num_gates], const float (&params)[C::num_parameters],
          const float (&previous)[C::num_states], float (&next)[C::num_states],
          float (&jacobian)[C::num_states * C::num_states]) {
    using Number = ActivationFloat<A>;
    Number in[C::num_gates], par[C::num_parameters], prev[C::num_states], out[C::num_states],
        jac[C::num_states * C::num_states];
    copy_into(in, inputs);
    copy_into(par, params);
    copy_into(prev, previous);
    C::step(in, par, prev, out, jac);
    copy_out(next, out);
    copy_out(jacobian, jac);
}

// Cell C's backward step (gradients of the inputs, the parameters' contribution, the previous state)
// with the activations A.
template <class C, Activations A>
__device__ __forceinline__ void
cell_backward(const float (&inputs)[C::num_gates], const float (&params)[C::num_parameters],
              const float (&previous)[C::num_states], const float (&d_next)[C::num_states],
              float (&d_inputs)[C::num_gates], float (&d_params)[C::num_parameters],
              float (&d_previous)[C::num_states]) {
    using Number = ActivationFloat<A>;
    Number in[C::num_gates], par[C::num_parameters], prev[C::num_states], d_out[C::num_states],
        d_in[C::num_gates], d_par[C::num_parameters], d_prev[C::num_states];
    copy_into(in, inputs);
    copy_into(par, params);
    copy_into(prev, previous);
    copy_into(d_out, d_next);
    C::backward(in, par, prev, d_out, d_in, d_par, d_prev);
    copy_out(d_inputs, d_in);
    copy_out(d_params, d_par);
    copy_out(d_previous, d_prev);
}

} // namespace flashrnn::cuda::newton

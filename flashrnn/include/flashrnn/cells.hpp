// The recurrent cells (LSTM, GRU, sLSTM, Elman): one header of __host__ __device__ pointwise functions
// each, used by the CPU reference and every kernel, and the registry that maps Cell to them.
#pragma once

#include "flashrnn/cells/registry.hpp"

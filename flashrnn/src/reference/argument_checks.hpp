// Shape checks of the reference's arguments; they throw ShapeError naming the tensor.
#pragma once

#include <string>

#include "flashrnn/rnn/reference.hpp"

namespace flashrnn::reference::detail {

void check_forward_arguments(const std::string& context, const CellInfo& cell, const ProblemShape& problem,
                             const ForwardInputs& inputs, const ForwardOutputs& outputs);
void check_backward_arguments(const std::string& context, const CellInfo& cell, const ProblemShape& problem,
                              const BackwardInputs& inputs, const BackwardOutputs& outputs);

} // namespace flashrnn::reference::detail

// Writes solutions in the FlatZinc output format: `x = 3;` for output_var, `xs = array1d(1..3,
// [1, 2, 3]);` for output_array, Booleans as true / false.
#pragma once

#include "flatzinc/builder.hpp"

#include <ostream>

namespace constrint::flatzinc {

// `values` are the model variables' values (by index).
void write_solution(std::ostream& out, const std::vector<Output>& outputs,
                    const std::vector<Integer>& values);

} // namespace constrint::flatzinc

// Parses FlatZinc text into its syntax tree; errors are ParseError with file, line and column.
#pragma once

#include "flatzinc/ast.hpp"
#include "flatzinc/deadline.hpp"

#include <string>
#include <string_view>

namespace constrint::flatzinc {

Ast parse(std::string_view source, const std::string& file, Deadline& deadline);

} // namespace constrint::flatzinc

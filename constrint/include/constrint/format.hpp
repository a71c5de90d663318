// The `.cint` model format: reading and writing (spec: docs/model-format.md).
#pragma once

#include "constrint/model.hpp"

#include <string>
#include <string_view>

namespace constrint {

// Parses `.cint` text; `file` names the source in error messages and constraint origins.
// Throws ParseError ("FILE:LINE:COLUMN: message") on bad text.
Model parse_cint(std::string_view text, const std::string& file = "<input>");
// Reads and parses a file; throws FileError when it cannot be read, ParseError on bad text.
Model load_cint(const std::string& path);
// The bytes of a model file; throws FileError for a missing, unreadable file or a directory.
std::string read_model_file(const std::string& path);
// Writes a model as `.cint` text that parse_cint reads back to an equivalent model.
std::string write_cint(const Model& model);
// One term or constraint in `.cint` syntax.
std::string to_cint(const Expr& term);
std::string to_cint(const Constraint& constraint);

} // namespace constrint

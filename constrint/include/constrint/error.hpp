// The exceptions ConstrINT throws. Every message carries the data that failed.
#pragma once

#include <stdexcept>
#include <string>

namespace constrint {

// Base of every ConstrINT error.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A model that cannot be built or solved as stated: unknown variable, negative exponent,
// division by a variable whose domain is only 0, variables of two models mixed, ...
class ModelError : public Error {
  public:
    using Error::Error;
};

// A `.cint` text that does not parse; what() reads "FILE:LINE:COLUMN: message".
class ParseError : public Error {
  public:
    ParseError(std::string file, int line, int column, const std::string& message)
        : Error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
          file_(std::move(file)), line_(line), column_(column), message_(message) {}
    const std::string& file() const { return file_; }
    int line() const { return line_; }
    int column() const { return column_; }
    const std::string& message() const { return message_; }

  private:
    std::string file_;
    int line_;
    int column_;
    std::string message_;
};

} // namespace constrint

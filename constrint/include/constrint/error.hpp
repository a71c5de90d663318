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

// A model file that cannot be read: missing, a directory, unreadable. what() names the file and the
// reason ("cannot open 'm.cint': No such file or directory"); there is no position to give.
class FileError : public Error {
  public:
    using Error::Error;
};

// Where in a model file an error is: mixed into the errors that have a place.
class Located {
  public:
    Located(std::string file, int line, int column, std::string message)
        : file_(std::move(file)), line_(line), column_(column), message_(std::move(message)) {}
    const std::string& file() const { return file_; }
    int line() const { return line_; }
    int column() const { return column_; }
    const std::string& message() const { return message_; } // without the position
    // "FILE:LINE:COLUMN: message", the what() of a located error
    static std::string text(const std::string& file, int line, int column, const std::string& message) {
        return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
    }

  private:
    std::string file_;
    int line_;
    int column_;
    std::string message_;
};

// A `.cint` text that does not parse; what() reads "FILE:LINE:COLUMN: message".
class ParseError : public Error, public Located {
  public:
    ParseError(std::string file, int line, int column, const std::string& message)
        : Error(text(file, line, column, message)), Located(std::move(file), line, column, message) {}
};

// A ModelError in a model read from a file: what() reads "FILE:LINE:COLUMN: message", at the
// term or constraint that cannot be posted (a division by a term whose only value is 0, a term
// too large). message() is the ModelError's text alone.
class LocatedModelError : public ModelError, public Located {
  public:
    LocatedModelError(std::string file, int line, int column, const std::string& message)
        : ModelError(text(file, line, column, message)), Located(std::move(file), line, column, message) {}
};

} // namespace constrint

// A byte of a model file as it reads in an error message, for both readers (.cint and FlatZinc):
// NUL would cut a message short and a stray byte of a UTF-8 sequence is not text.
#pragma once

#include <cstdio>
#include <string>

namespace constrint {

// 'x' when printable ASCII, '\xNN' otherwise.
inline std::string quote_byte(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "'\\x%02x'", byte);
    return buffer;
}

} // namespace constrint

// Tokens of FlatZinc (the MiniZinc compiler's output) with their source positions.
#pragma once

#include "flatzinc/deadline.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace constrint::flatzinc {

enum class Tok : unsigned char {
    Ident,      // a name or a keyword (var, array, constraint, ...)
    Int,        // 12, -3, 0x1f, 0o17 (the sign belongs to the literal)
    Float,      // 1.5, -2e3
    String,     // "text" (without quotes, escapes kept)
    LParen,     // (
    RParen,     // )
    LBracket,   // [
    RBracket,   // ]
    LBrace,     // {
    RBrace,     // }
    Comma,      // ,
    Colon,      // :
    ColonColon, // ::
    Semicolon,  // ;
    DotDot,     // ..
    Equals,     // =
    Error,      // a lexical error; `text` holds the message
    End,        // end of input
};

const char* describe(Tok kind); // "';'", "an identifier", "end of file", ...

struct Token {
    Tok kind = Tok::End;
    std::string text;
    int line = 1;   // 1-based
    int column = 1; // 1-based, in bytes
};

// The whole text as tokens, ending with End. A lexical error becomes one Error token followed by
// End, so that the parser reports it in source order.
std::vector<Token> tokenize(std::string_view source, Deadline& deadline);

} // namespace constrint::flatzinc

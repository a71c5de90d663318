// Tokens of the `.cint` format (docs/model-format.md) with their source positions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace constrint::format {

enum class Tok : unsigned char {
    Name,      // x, HD_2, `any text` (quoted)
    Number,    // 123 (unsigned; the sign is unary minus)
    Plus,      // +
    Minus,     // -
    Star,      // *
    Slash,     // /
    Caret,     // ^
    Percent,   // %
    LParen,    // (
    RParen,    // )
    LBracket,  // [
    RBracket,  // ]
    Comma,     // ,
    Semicolon, // ;
    DotDot,    // ..
    Pipe,      // | or ||
    Amp,       // & or &&
    Eq,        // ==
    Ne,        // !=
    Le,        // <=
    Lt,        // <
    Ge,        // >=
    Gt,        // >
    Error,     // a lexical error; `text` holds the message
    End,       // end of input
};

// How a token kind reads in messages: "';'", "a name", "end of file".
const char* describe(Tok kind);

struct Token {
    Tok kind = Tok::End;
    std::string text;      // the spelling; a quoted name without its backticks; an error's message
    int line = 1;          // 1-based
    int column = 1;        // 1-based, in bytes
    std::size_t begin = 0; // byte offsets into the source: [begin, end)
    std::size_t end = 0;
    bool quoted = false; // a `quoted` name: never a keyword
};

// Splits the whole text into tokens. A lexical error becomes one Error token followed by End, so
// that the parser reports errors in source order.
std::vector<Token> tokenize(std::string_view source);

// Whether `name` can be written without backticks.
bool is_plain_name(std::string_view name);

} // namespace constrint::format

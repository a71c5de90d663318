#include "flatzinc/lexer.hpp"
#include "format/quote_byte.hpp"

#include <cctype>

namespace constrint::flatzinc {

const char* describe(Tok kind) {
    switch (kind) {
    case Tok::Ident:
        return "an identifier";
    case Tok::Int:
        return "an integer";
    case Tok::Float:
        return "a float";
    case Tok::String:
        return "a string";
    case Tok::LParen:
        return "'('";
    case Tok::RParen:
        return "')'";
    case Tok::LBracket:
        return "'['";
    case Tok::RBracket:
        return "']'";
    case Tok::LBrace:
        return "'{'";
    case Tok::RBrace:
        return "'}'";
    case Tok::Comma:
        return "','";
    case Tok::Colon:
        return "':'";
    case Tok::ColonColon:
        return "'::'";
    case Tok::Semicolon:
        return "';'";
    case Tok::DotDot:
        return "'..'";
    case Tok::Equals:
        return "'='";
    case Tok::Error:
        return "an invalid token";
    case Tok::End:
        return "end of file";
    }
    return "?";
}

namespace {

bool ident_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c));
}

class Lexer {
  public:
    Lexer(std::string_view source, Deadline& deadline) : src_(source), deadline_(deadline) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        for (;;) {
            deadline_.check();
            skip_blank();
            Token t;
            t.line = line_;
            t.column = column();
            if (at_ >= src_.size()) {
                tokens.push_back(t);
                return tokens;
            }
            lex(t);
            const bool error = t.kind == Tok::Error;
            tokens.push_back(std::move(t));
            if (error) {
                Token end;
                end.line = line_;
                end.column = column();
                tokens.push_back(end);
                return tokens;
            }
        }
    }

  private:
    int column() const { return static_cast<int>(at_ - line_start_) + 1; }
    char peek(std::size_t ahead = 0) const { return at_ + ahead < src_.size() ? src_[at_ + ahead] : '\0'; }

    void skip_blank() {
        while (at_ < src_.size()) {
            const char c = src_[at_];
            if (c == '\n') {
                ++at_;
                ++line_;
                line_start_ = at_;
            } else if (std::isspace(static_cast<unsigned char>(c))) {
                ++at_;
            } else if (c == '%') { // a comment runs to the end of the line
                while (at_ < src_.size() && src_[at_] != '\n')
                    ++at_;
            } else {
                return;
            }
        }
    }

    void lex(Token& t) {
        const char c = peek();
        const std::size_t begin = at_;
        if (ident_start(c)) {
            while (ident_char(peek()))
                ++at_;
            t.kind = Tok::Ident;
            t.text = std::string(src_.substr(begin, at_ - begin));
            return;
        }
        if (digit(c) || (c == '-' && digit(peek(1)))) return number(t);
        if (c == '"') return string(t);
        ++at_;
        switch (c) {
        case '(':
            t.kind = Tok::LParen;
            return;
        case ')':
            t.kind = Tok::RParen;
            return;
        case '[':
            t.kind = Tok::LBracket;
            return;
        case ']':
            t.kind = Tok::RBracket;
            return;
        case '{':
            t.kind = Tok::LBrace;
            return;
        case '}':
            t.kind = Tok::RBrace;
            return;
        case ',':
            t.kind = Tok::Comma;
            return;
        case ';':
            t.kind = Tok::Semicolon;
            return;
        case '=':
            t.kind = Tok::Equals;
            return;
        case ':':
            if (peek() == ':')
                ++at_, t.kind = Tok::ColonColon;
            else
                t.kind = Tok::Colon;
            return;
        case '.':
            if (peek() == '.') {
                ++at_;
                t.kind = Tok::DotDot;
                return;
            }
            break;
        default:
            break;
        }
        t.kind = Tok::Error;
        t.text = "unexpected character " + quote_byte(c);
    }

    void number(Token& t) {
        const std::size_t begin = at_;
        if (peek() == '-') ++at_;
        if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'o')) { // hexadecimal, octal
            at_ += 2;
            while (std::isxdigit(static_cast<unsigned char>(peek())))
                ++at_;
            t.kind = Tok::Int;
            t.text = std::string(src_.substr(begin, at_ - begin));
            return;
        }
        while (digit(peek()))
            ++at_;
        t.kind = Tok::Int;
        // A '.' followed by a digit makes a float; ".." is a range.
        if (peek() == '.' && digit(peek(1))) {
            ++at_;
            while (digit(peek()))
                ++at_;
            t.kind = Tok::Float;
        }
        if ((peek() == 'e' || peek() == 'E') &&
            (digit(peek(1)) || ((peek(1) == '-' || peek(1) == '+') && digit(peek(2))))) {
            at_ += 2;
            while (digit(peek()))
                ++at_;
            t.kind = Tok::Float;
        }
        t.text = std::string(src_.substr(begin, at_ - begin));
    }

    void string(Token& t) {
        ++at_; // the opening quote
        const std::size_t begin = at_;
        while (at_ < src_.size() && src_[at_] != '"' && src_[at_] != '\n') {
            if (src_[at_] == '\\' && at_ + 1 < src_.size()) ++at_;
            ++at_;
        }
        if (peek() != '"') {
            t.kind = Tok::Error;
            t.text = "unterminated string";
            return;
        }
        t.kind = Tok::String;
        t.text = std::string(src_.substr(begin, at_ - begin));
        ++at_;
    }

    std::string_view src_;
    Deadline& deadline_;
    std::size_t at_ = 0;
    std::size_t line_start_ = 0;
    int line_ = 1;
};

} // namespace

std::vector<Token> tokenize(std::string_view source, Deadline& deadline) {
    return Lexer(source, deadline).run();
}

} // namespace constrint::flatzinc

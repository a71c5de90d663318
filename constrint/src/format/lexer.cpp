#include "format/lexer.hpp"
#include "format/quote_byte.hpp"

namespace constrint::format {

const char* describe(Tok kind) {
    switch (kind) {
    case Tok::Name:
        return "a name";
    case Tok::Number:
        return "a number";
    case Tok::Plus:
        return "'+'";
    case Tok::Minus:
        return "'-'";
    case Tok::Star:
        return "'*'";
    case Tok::Slash:
        return "'/'";
    case Tok::Caret:
        return "'^'";
    case Tok::Percent:
        return "'%'";
    case Tok::LParen:
        return "'('";
    case Tok::RParen:
        return "')'";
    case Tok::LBracket:
        return "'['";
    case Tok::RBracket:
        return "']'";
    case Tok::Comma:
        return "','";
    case Tok::Semicolon:
        return "';'";
    case Tok::DotDot:
        return "'..'";
    case Tok::Pipe:
        return "'|'";
    case Tok::Amp:
        return "'&'";
    case Tok::Eq:
        return "'=='";
    case Tok::Ne:
        return "'!='";
    case Tok::Le:
        return "'<='";
    case Tok::Lt:
        return "'<'";
    case Tok::Ge:
        return "'>='";
    case Tok::Gt:
        return "'>'";
    case Tok::Error:
        return "an invalid token";
    case Tok::End:
        return "end of file";
    }
    return "?";
}

namespace {

bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

class Lexer {
  public:
    explicit Lexer(std::string_view source) : source_(source) {
        if (source_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3; // a UTF-8 byte order mark
    }

    std::vector<Token> run() {
        std::vector<Token> tokens;
        while (true) {
            skip_space_and_comments();
            Token token = next();
            const bool stop = token.kind == Tok::Error || token.kind == Tok::End;
            tokens.push_back(std::move(token));
            if (stop) break;
        }
        if (tokens.back().kind == Tok::Error) {
            Token end = tokens.back();
            end.kind = Tok::End;
            end.text.clear();
            tokens.push_back(std::move(end));
        }
        return tokens;
    }

  private:
    char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < source_.size() ? source_[pos_ + ahead] : '\0';
    }
    bool at_end() const { return pos_ >= source_.size(); }

    void advance() {
        if (source_[pos_] == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
        }
        ++pos_;
    }

    void skip_space_and_comments() {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
                advance();
            } else if (c == '#') {
                while (!at_end() && peek() != '\n')
                    advance();
            } else {
                break;
            }
        }
    }

    Token start(Tok kind) const {
        Token t;
        t.kind = kind;
        t.line = line_;
        t.column = static_cast<int>(pos_ - line_start_) + 1;
        t.begin = pos_;
        return t;
    }

    Token finish(Token t) const {
        t.end = pos_;
        if (t.kind != Tok::Error && !t.quoted) t.text = std::string(source_.substr(t.begin, t.end - t.begin));
        return t;
    }

    Token error(Token t, std::string message) {
        t.kind = Tok::Error;
        t.text = std::move(message);
        t.end = t.begin;
        return t;
    }

    Token symbol(Tok kind, std::size_t length) {
        Token t = start(kind);
        for (std::size_t i = 0; i < length; ++i)
            advance();
        return finish(std::move(t));
    }

    Token next() {
        if (at_end()) return finish(start(Tok::End));
        const char c = peek();
        if (is_letter(c)) {
            Token t = start(Tok::Name);
            while (is_letter(peek()) || is_digit(peek()))
                advance();
            return finish(std::move(t));
        }
        if (is_digit(c)) {
            Token t = start(Tok::Number);
            while (is_digit(peek()))
                advance();
            if (is_letter(peek())) {
                std::size_t end = pos_;
                while (end < source_.size() && (is_letter(source_[end]) || is_digit(source_[end])))
                    ++end;
                return error(std::move(t), "a name cannot start with a digit: '" +
                                               std::string(source_.substr(t.begin, end - t.begin)) + "'");
            }
            if (peek() == '.' && is_digit(peek(1))) {
                return error(std::move(t),
                             "numbers are integers: no decimal point (ranges are written lo..hi)");
            }
            return finish(std::move(t));
        }
        switch (c) {
        case '`':
            return quoted_name();
        case '+':
            return symbol(Tok::Plus, 1);
        case '-':
            return symbol(Tok::Minus, 1);
        case '*':
            return symbol(Tok::Star, 1);
        case '/':
            return symbol(Tok::Slash, 1);
        case '^':
            return symbol(Tok::Caret, 1);
        case '%':
            return symbol(Tok::Percent, 1);
        case '(':
            return symbol(Tok::LParen, 1);
        case ')':
            return symbol(Tok::RParen, 1);
        case '[':
            return symbol(Tok::LBracket, 1);
        case ']':
            return symbol(Tok::RBracket, 1);
        case ',':
            return symbol(Tok::Comma, 1);
        case ';':
            return symbol(Tok::Semicolon, 1);
        case '|':
            return symbol(Tok::Pipe, peek(1) == '|' ? 2 : 1);
        case '&':
            return symbol(Tok::Amp, peek(1) == '&' ? 2 : 1);
        case '.':
            if (peek(1) == '.') return symbol(Tok::DotDot, 2);
            return error(start(Tok::Error), "unexpected '.' (ranges are written lo..hi)");
        case '=':
            if (peek(1) == '=') return symbol(Tok::Eq, 2);
            if (peek(1) == '<')
                return error(start(Tok::Error), "'=<' is not an operator; did you mean '<='?");
            if (peek(1) == '>')
                return error(start(Tok::Error), "'=>' is not an operator; did you mean '>='?");
            return error(start(Tok::Error), "'=' is not an operator; did you mean '=='?");
        case '!':
            if (peek(1) == '=') return symbol(Tok::Ne, 2);
            return error(start(Tok::Error), "unexpected '!'; did you mean '!='?");
        case '<':
            if (peek(1) == '=') return symbol(Tok::Le, 2);
            if (peek(1) == '>')
                return error(start(Tok::Error), "'<>' is not an operator; did you mean '!='?");
            return symbol(Tok::Lt, 1);
        case '>':
            if (peek(1) == '=') return symbol(Tok::Ge, 2);
            return symbol(Tok::Gt, 1);
        default:
            break;
        }
        return error(start(Tok::Error), "unexpected character " + quote_byte(c));
    }

    Token quoted_name() {
        Token t = start(Tok::Name);
        t.quoted = true;
        advance(); // the opening backtick
        const std::size_t first = pos_;
        while (!at_end() && peek() != '`' && peek() != '\n' && peek() != '\r')
            advance();
        if (at_end() || peek() != '`') {
            return error(std::move(t), "unterminated quoted name (missing '`' before the end of the line)");
        }
        t.text = std::string(source_.substr(first, pos_ - first));
        advance(); // the closing backtick
        if (t.text.empty()) return error(std::move(t), "empty quoted name");
        return finish(std::move(t));
    }

    std::string_view source_;
    std::size_t pos_ = 0;
    std::size_t line_start_ = 0;
    int line_ = 1;
};

} // namespace

std::vector<Token> tokenize(std::string_view source) {
    return Lexer(source).run();
}

bool is_plain_name(std::string_view name) {
    if (name.empty() || !is_letter(name[0])) return false;
    for (char c : name) {
        if (!is_letter(c) && !is_digit(c)) return false;
    }
    return true;
}

} // namespace constrint::format

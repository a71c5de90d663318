#include "flatzinc/parser.hpp"

#include "constrint/error.hpp"
#include "flatzinc/lexer.hpp"

namespace constrint::flatzinc {

namespace {

// Arrays and annotation calls nest at most this deep (the parser and the syntax tree's destructor
// recurse through them).
constexpr int kMaxNesting = 1000;

class Parser {
  public:
    Parser(std::string_view source, std::string file, Deadline& deadline)
        : tokens_(tokenize(source, deadline)), file_(std::move(file)), deadline_(deadline) {}

    Ast run() {
        Ast ast;
        while (peek().kind != Tok::End) {
            deadline_.check();
            const Token& t = peek();
            if (t.kind == Tok::Error) fail(t, t.text);
            if (is(t, "predicate")) {
                skip_predicate();
            } else if (is(t, "constraint")) {
                ast.constraints.push_back(constraint_item());
            } else if (is(t, "solve")) {
                if (ast.solve) fail(t, "a second solve item");
                ast.solve = solve_item();
            } else {
                ast.declarations.push_back(declaration());
            }
        }
        if (!ast.solve) fail(peek(), "the model has no solve item");
        return ast;
    }

  private:
    [[noreturn]] void fail(const Token& at, const std::string& message) const {
        throw ParseError(file_, at.line, at.column, message);
    }
    static bool is(const Token& t, const char* word) { return t.kind == Tok::Ident && t.text == word; }
    static Position where(const Token& t) { return {t.line, t.column}; }
    const Token& peek(std::size_t ahead = 0) const {
        const std::size_t i = std::min(at_ + ahead, tokens_.size() - 1);
        return tokens_[i];
    }
    const Token& next() {
        const Token& t = peek();
        if (t.kind == Tok::Error) fail(t, t.text);
        if (at_ < tokens_.size() - 1) ++at_;
        return t;
    }
    bool accept(Tok kind) {
        if (peek().kind != kind) return false;
        next();
        return true;
    }
    const Token& expect(Tok kind, const char* context) {
        const Token& t = peek();
        if (t.kind == Tok::Error) fail(t, t.text);
        if (t.kind != kind) {
            fail(t, std::string("expected ") + describe(kind) + " " + context + ", found " +
                        (t.kind == Tok::Ident || t.kind == Tok::Int ? "'" + t.text + "'" : describe(t.kind)));
        }
        return next();
    }
    void expect_word(const char* word, const char* context) {
        if (!is(peek(), word)) fail(peek(), std::string("expected '") + word + "' " + context);
        next();
    }

    Integer integer(const Token& t) {
        std::string text = t.text;
        bool negative = false;
        if (!text.empty() && text[0] == '-') negative = true, text.erase(0, 1);
        std::optional<Integer> value;
        if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'o')) {
            value = parse_digits(std::string_view(text).substr(2), text[1] == 'x' ? 16 : 8);
            if (!value) fail(t, "invalid digit in '" + t.text + "'");
        } else {
            value = parse_integer(text);
        }
        if (!value) fail(t, "invalid integer '" + t.text + "'");
        return negative ? Integer(-*value) : *value;
    }

    // `predicate name(...);`: declarations of solver-specific builtins, nothing to do.
    void skip_predicate() {
        const Token& start = next();
        int depth = 0;
        while (depth > 0 || peek().kind != Tok::Semicolon) {
            const Token& t = next();
            if (t.kind == Tok::End) fail(start, "unterminated predicate item");
            if (t.kind == Tok::LParen || t.kind == Tok::LBracket) ++depth;
            if (t.kind == Tok::RParen || t.kind == Tok::RBracket) --depth;
        }
        next();
    }

    // int, bool, float, `set of int`, `1..5`, `{1, 3}`, `1.0..2.0`, `set of 1..3`.
    void base_type(Type& type) {
        const Token& t = peek();
        if (is(t, "int")) {
            next();
            type.base = BaseType::Int;
        } else if (is(t, "bool")) {
            next();
            type.base = BaseType::Bool;
        } else if (is(t, "float")) {
            next();
            type.base = BaseType::Float;
        } else if (is(t, "set")) {
            next();
            expect_word("of", "after 'set'");
            Type element;
            base_type(element);
            type.base = BaseType::Set;
            type.domain = element.domain;
        } else if (t.kind == Tok::Float) {
            next();
            expect(Tok::DotDot, "in a float range");
            expect(Tok::Float, "after '..'");
            type.base = BaseType::Float;
        } else if (t.kind == Tok::Int || t.kind == Tok::LBrace) {
            type.base = BaseType::Int;
            type.domain = set_literal();
        } else {
            fail(t, "expected a type, found " +
                        (t.kind == Tok::Ident ? "'" + t.text + "'" : std::string(describe(t.kind))));
        }
    }

    Type type() {
        Type type;
        if (is(peek(), "array")) {
            next();
            expect(Tok::LBracket, "after 'array'");
            if (is(peek(), "int")) {
                next(); // `array [int]` only appears in predicate items, skipped before
            } else {
                const Token& lo = expect(Tok::Int, "as the first index of an array");
                if (integer(lo) != 1) fail(lo, "FlatZinc arrays are indexed from 1");
                expect(Tok::DotDot, "in an array's index set");
                type.array_size = integer(expect(Tok::Int, "as the last index of an array"));
            }
            expect(Tok::RBracket, "after an array's index set");
            expect_word("of", "after an array's index set");
            type.is_array = true;
        }
        if (is(peek(), "var")) {
            next();
            type.is_var = true;
        }
        base_type(type);
        return type;
    }

    Declaration declaration() {
        Declaration d;
        d.pos = where(peek());
        d.type = type();
        expect(Tok::Colon, "after a type");
        d.name = expect(Tok::Ident, "as the declared name").text;
        d.annotations = annotations();
        if (accept(Tok::Equals)) d.value = expression();
        expect(Tok::Semicolon, "after a declaration");
        return d;
    }

    ConstraintItem constraint_item() {
        ConstraintItem c;
        next();
        c.pos = where(peek());
        c.name = expect(Tok::Ident, "after 'constraint'").text;
        expect(Tok::LParen, "after the constraint's name");
        if (peek().kind != Tok::RParen) {
            do
                c.args.push_back(expression());
            while (accept(Tok::Comma));
        }
        expect(Tok::RParen, "after the constraint's arguments");
        c.annotations = annotations();
        expect(Tok::Semicolon, "after a constraint");
        return c;
    }

    SolveItem solve_item() {
        SolveItem s;
        s.pos = where(next());
        s.annotations = annotations();
        const Token& goal = peek();
        if (is(goal, "satisfy")) {
            next();
        } else if (is(goal, "minimize") || is(goal, "maximize")) {
            next();
            s.goal = goal.text == "minimize" ? SolveItem::Goal::Minimize : SolveItem::Goal::Maximize;
            s.objective = expression();
        } else {
            fail(goal, "expected 'satisfy', 'minimize' or 'maximize'");
        }
        expect(Tok::Semicolon, "after the solve item");
        return s;
    }

    std::vector<Node> annotations() {
        std::vector<Node> list;
        while (accept(Tok::ColonColon))
            list.push_back(expression());
        return list;
    }

    // `{1, 3, 5}`, `{}` or `lo..hi`.
    Domain set_literal() {
        if (accept(Tok::LBrace)) {
            std::vector<Integer> values;
            if (peek().kind != Tok::RBrace) {
                do
                    values.push_back(integer(expect(Tok::Int, "in a set")));
                while (accept(Tok::Comma));
            }
            expect(Tok::RBrace, "after a set's elements");
            return Domain::values(std::move(values));
        }
        const Integer lo = integer(expect(Tok::Int, "as a range's lower bound"));
        expect(Tok::DotDot, "in a range");
        const Integer hi = integer(expect(Tok::Int, "as a range's upper bound"));
        return lo <= hi ? Domain::range(lo, hi) : Domain();
    }

    Node expression() {
        const Token& t = peek();
        if (depth_ >= kMaxNesting) {
            fail(t,
                 "nesting deeper than " + std::to_string(kMaxNesting) + " levels of arrays or annotations");
        }
        ++depth_;
        Node n = nested_expression();
        --depth_;
        return n;
    }

    Node nested_expression() {
        const Token& t = peek();
        Node n;
        n.pos = where(t);
        switch (t.kind) {
        case Tok::Int:
            if (peek(1).kind == Tok::DotDot) {
                n.kind = Node::Kind::Set;
                n.set = set_literal();
                return n;
            }
            n.kind = Node::Kind::Int;
            n.value = integer(next());
            return n;
        case Tok::Float:
            n.kind = Node::Kind::Float;
            n.text = next().text;
            if (accept(Tok::DotDot)) expect(Tok::Float, "after '..'"); // a float range: unsupported later
            return n;
        case Tok::String:
            n.kind = Node::Kind::String;
            n.text = next().text;
            return n;
        case Tok::LBrace:
            n.kind = Node::Kind::Set;
            n.set = set_literal();
            return n;
        case Tok::LBracket:
            next();
            n.kind = Node::Kind::Array;
            if (peek().kind != Tok::RBracket) {
                do
                    n.items.push_back(expression());
                while (accept(Tok::Comma));
            }
            expect(Tok::RBracket, "after an array's elements");
            return n;
        case Tok::Ident: {
            const Token& name = next();
            if (name.text == "true" || name.text == "false") {
                n.kind = Node::Kind::Bool;
                n.value = name.text == "true" ? 1 : 0;
                return n;
            }
            n.text = name.text;
            if (accept(Tok::LParen)) {
                n.kind = Node::Kind::Call;
                if (peek().kind != Tok::RParen) {
                    do
                        n.items.push_back(expression());
                    while (accept(Tok::Comma));
                }
                expect(Tok::RParen, "after an annotation's arguments");
            } else if (accept(Tok::LBracket)) {
                n.kind = Node::Kind::Access;
                n.value = integer(expect(Tok::Int, "as an array index"));
                expect(Tok::RBracket, "after an array index");
            } else {
                n.kind = Node::Kind::Ident;
            }
            return n;
        }
        default:
            fail(t, std::string("expected an expression, found ") + describe(t.kind));
        }
    }

    std::vector<Token> tokens_;
    std::size_t at_ = 0;
    int depth_ = 0; // of expression() calls
    std::string file_;
    Deadline& deadline_;
};

} // namespace

Ast parse(std::string_view source, const std::string& file, Deadline& deadline) {
    return Parser(source, file, deadline).run();
}

} // namespace constrint::flatzinc

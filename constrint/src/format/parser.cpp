// The `.cint` reader: a recursive-descent parser over the token list (grammar: docs/model-format.md).
#include "constrint/error.hpp"
#include "constrint/format.hpp"
#include "format/lexer.hpp"
#include "model/term_walk.hpp"

#include <algorithm>
#include <map>

namespace constrint {

namespace {

using format::Tok;
using format::Token;

// Limits that keep hostile input from exhausting the stack or memory; real models stay far below.
constexpr int kMaxNesting = 1000;    // parser recursion (parentheses, unary minus, ^)
constexpr int kMaxTermDepth = 10000; // depth of one term tree (a sum of 10000 terms)
// Digits of one integer literal: enough for any constant within kMaxConstantBits (log10 2 < 0.30103),
// so that the writer's output, which spells such a constant out, reads back (found by fuzz_cint).
constexpr std::size_t kMaxDigits = kMaxConstantBits * 30103 / 100000 + 2;
constexpr long long kMaxExponent = 65536; // as constrint::pow
// The sizes of values: kMaxConstantBits for constants (computed while parsing), kMaxTermBits for
// terms with variables (checked once every declaration is read, with the final domains).

std::uint64_t bit_length(const Integer& v) {
    return v == 0 ? 1 : boost::multiprecision::msb(abs(v)) + 1;
}

// A parsed term with what the parser knows about it: its value when it has no variables, and an
// upper estimate of the bits its values may need (to refuse terms like (2^65536)^65536).
struct Term {
    Expr expr;
    std::optional<Integer> value; // constant terms only; empty when a division by zero occurred
    bool constant = false;        // no variables
    std::uint64_t bits = 1;
    int depth = 1;
    bool literal = false; // a plain number as written (unary minus folds into it)
};

bool is_relation(Tok kind) {
    return kind == Tok::Eq || kind == Tok::Ne || kind == Tok::Le || kind == Tok::Lt || kind == Tok::Ge ||
           kind == Tok::Gt;
}

bool ends_term(Tok kind) {
    return kind == Tok::Name || kind == Tok::Number || kind == Tok::RParen || kind == Tok::RBracket;
}

// A constraint's source text for its Origin: comments dropped, whitespace runs made one space.
std::string clean_text(std::string_view text) {
    std::string out;
    bool space = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '#') {
            while (i < text.size() && text[i] != '\n')
                ++i;
            space = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
            space = true;
            continue;
        }
        if (space && !out.empty()) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

const char* const kModHint = "for the remainder write mod(a, b)";

class Parser {
  public:
    Parser(std::string_view source, std::string file)
        : source_(source), file_(std::move(file)), tokens_(format::tokenize(source)) {}

    Model run() {
        try {
            while (tok().kind != Tok::End)
                statement();
            if (!search_order_.empty()) model_.search(search_order_);
            check_sizes();
        } catch (const ModelError& e) { // an API check the parser did not anticipate
            fail(tok(), e.what());
        }
        return std::move(model_);
    }

  private:
    // ---- tokens and errors ------------------------------------------------------------------

    const Token& tok() const { return tokens_[pos_]; }
    const Token& ahead(std::size_t k) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
    const Token& take() {
        const Token& t = tokens_[pos_];
        if (pos_ + 1 < tokens_.size()) ++pos_;
        return t;
    }
    bool at(Tok kind) const { return tok().kind == kind; }
    bool at_word(std::string_view word) const { return is_word(tok(), word); }
    static bool is_word(const Token& t, std::string_view word) {
        return t.kind == Tok::Name && !t.quoted && t.text == word;
    }

    // A failure at an invalid token reports the lexical error: it is what went wrong there.
    [[noreturn]] void fail(const Token& t, const std::string& message) const {
        if (t.kind == Tok::Error) throw ParseError(file_, t.line, t.column, t.text);
        throw ParseError(file_, t.line, t.column, message);
    }
    // An error just after token t (for a missing ';' the end of the line is the useful place),
    // unless the token that follows is itself invalid.
    [[noreturn]] void fail_after(const Token& t, const std::string& message) const {
        if (tok().kind == Tok::Error) throw ParseError(file_, tok().line, tok().column, tok().text);
        throw ParseError(file_, t.line, t.column + static_cast<int>(t.end - t.begin), message);
    }
    std::string found() const {
        const Token& t = tok();
        if (t.kind == Tok::Name) return "'" + t.text + "'";
        if (t.kind == Tok::Number) return t.text.size() > 20 ? "a number" : "'" + t.text + "'";
        return describe(t.kind);
    }
    const Token& expect(Tok kind, const std::string& what) {
        if (!at(kind))
            fail(tok(), "expected " + std::string(describe(kind)) + " " + what + ", found " + found());
        return take();
    }
    const Token& previous() const { return tokens_[pos_ == 0 ? 0 : pos_ - 1]; }

    // Ends a statement: ';', or the end of the file (the original format let the last one go).
    void end_statement(const char* what) {
        if (at(Tok::Semicolon)) {
            take();
            return;
        }
        if (at(Tok::End)) return;
        if (at(Tok::Percent)) fail(tok(), std::string("'%' is only divisibility: a % b == 0; ") + kModHint);
        fail_after(previous(), std::string("expected ';' after ") + what + ", found " + found());
    }

    struct NestingGuard {
        explicit NestingGuard(Parser& p) : parser(p) {
            if (++parser.nesting_ > kMaxNesting) {
                parser.fail(parser.tok(),
                            "nesting too deep (more than " + std::to_string(kMaxNesting) + " levels)");
            }
        }
        ~NestingGuard() { --parser.nesting_; }
        NestingGuard(const NestingGuard&) = delete;
        NestingGuard& operator=(const NestingGuard&) = delete;
        Parser& parser;
    };

    // ---- statements --------------------------------------------------------------------------

    void statement() {
        if (at(Tok::Semicolon)) { // an empty statement
            take();
            return;
        }
        const Token& first = tok();
        const Token& second = ahead(1);
        if (first.kind == Tok::Name && !first.quoted) {
            if (second.kind == Tok::Name) {
                if (first.text == "var") return declaration();
                if (first.text == "search") return search();
                if (first.text == "prefer") return prefer();
            }
            if ((first.text == "maximize" || first.text == "minimize") && starts_objective())
                return objective();
        }
        constraint_statement();
    }

    // `maximize` / `minimize` followed by a term; a following '-' is ambiguous (`maximize - x <= 3`
    // subtracts from a variable named maximize), so it is an objective only when no relation follows.
    bool starts_objective() const {
        const Tok next = ahead(1).kind;
        if (next == Tok::Name || next == Tok::Number || next == Tok::LParen) return true;
        if (next != Tok::Minus) return false;
        for (std::size_t i = pos_ + 1; i < tokens_.size(); ++i) {
            const Tok k = tokens_[i].kind;
            if (k == Tok::Semicolon || k == Tok::End || k == Tok::Error) break;
            if (is_relation(k) || k == Tok::Percent || k == Tok::Pipe || k == Tok::Amp) return false;
        }
        return true;
    }

    void declaration() {
        take(); // var
        std::vector<const Token*> names;
        while (true) {
            if (!at(Tok::Name)) fail(tok(), "expected a variable name, found " + found());
            names.push_back(&take());
            if (!at(Tok::Comma)) break;
            take();
        }
        Domain domain = Domain::range(1, default_upper_bound());
        if (at_word("in")) {
            take();
            domain = parse_set();
        } else if (!at(Tok::Semicolon) && !at(Tok::End)) {
            if (at(Tok::Eq))
                fail(tok(), "a declaration gives a domain with 'in' (var x in 1..10;), found '=='");
            fail(tok(), "expected 'in', ',' or ';' in the declaration of '" + names.back()->text +
                            "', found " + found());
        }
        for (const Token* name : names) {
            auto seen = declared_.find(name->text);
            if (seen != declared_.end()) {
                fail(*name, "variable '" + name->text + "' declared twice (first at line " +
                                std::to_string(seen->second) + ")");
            }
            declared_.emplace(name->text, name->line);
            if (model_.has(name->text)) {
                model_.set_domain(model_.at(name->text), domain);
            } else {
                model_.var(name->text, domain);
            }
        }
        end_statement("declaration");
    }

    void search() {
        take(); // search
        while (true) {
            if (!at(Tok::Name)) fail(tok(), "expected a variable name, found " + found());
            const Token& name = take();
            auto seen = searched_.find(name.text);
            if (seen != searched_.end()) {
                fail(name, "variable '" + name.text + "' appears twice in the search order (first at line " +
                               std::to_string(seen->second) + ")");
            }
            searched_.emplace(name.text, name.line);
            search_order_.push_back(variable(name));
            if (!at(Tok::Comma)) break;
            take();
        }
        end_statement("search order");
    }

    void prefer() {
        take(); // prefer
        const Token& name = take();
        static const std::map<std::string, Prefer, std::less<>> directions = {
            {"min", Prefer::Min},
            {"max", Prefer::Max},
            {"split_low", Prefer::SplitLow},
            {"split_high", Prefer::SplitHigh}};
        auto direction = at(Tok::Name) && !tok().quoted ? directions.find(tok().text) : directions.end();
        if (direction == directions.end()) {
            fail(tok(), "expected min, max, split_low or split_high after 'prefer " + name.text +
                            "', found " + found());
        }
        take();
        auto seen = preferred_.find(name.text);
        if (seen != preferred_.end()) {
            fail(name, "preference for '" + name.text + "' given twice (first at line " +
                           std::to_string(seen->second) + ")");
        }
        preferred_.emplace(name.text, name.line);
        model_.prefer(variable(name), direction->second);
        end_statement("preference");
    }

    void objective() {
        const Token& keyword = take();
        const bool maximize = keyword.text == "maximize";
        Term t = parse_sum();
        if (at(Tok::Percent)) fail(tok(), std::string("'%' is only divisibility: a % b == 0; ") + kModHint);
        Origin origin;
        origin.file = file_;
        origin.line = keyword.line;
        origin.column = keyword.column;
        if (maximize) {
            model_.maximize(t.expr, std::move(origin));
        } else {
            model_.minimize(t.expr, std::move(origin));
        }
        end_statement("objective");
    }

    void constraint_statement() {
        const std::size_t first = pos_;
        Constraint c = parse_disjunction();
        const Token& last = previous();
        Origin origin;
        origin.file = file_;
        origin.line = tokens_[first].line;
        origin.column = tokens_[first].column;
        origin.text = clean_text(source_.substr(tokens_[first].begin, last.end - tokens_[first].begin));
        end_statement("constraint");
        model_.add(c, std::move(origin));
    }

    // ---- constraints -------------------------------------------------------------------------

    Constraint parse_disjunction() {
        Constraint c = parse_conjunction();
        while (at(Tok::Pipe)) {
            take();
            c = c | parse_conjunction();
        }
        return c;
    }

    Constraint parse_conjunction() {
        Constraint c = parse_constraint_atom();
        while (at(Tok::Amp)) {
            take();
            c = c & parse_constraint_atom();
        }
        return c;
    }

    // Whether the '(' at index `open` starts a parenthesised constraint rather than a term: a
    // relation can never occur inside a term, so any relation before the matching ')' decides.
    bool constraint_group(std::size_t open) const {
        int depth = 0;
        for (std::size_t i = open; i < tokens_.size(); ++i) {
            const Token& t = tokens_[i];
            switch (t.kind) {
            case Tok::LParen:
                ++depth;
                break;
            case Tok::RParen:
                if (--depth == 0) return false;
                break;
            case Tok::Semicolon:
            case Tok::End:
            case Tok::Error:
                return false;
            case Tok::Pipe:
            case Tok::Amp:
                return true;
            default:
                if (is_relation(t.kind)) return true;
                if (is_word(t, "in") && i > open && ends_term(tokens_[i - 1].kind)) return true;
                break;
            }
        }
        return false;
    }

    Constraint parse_constraint_atom() {
        if (at(Tok::LParen) && constraint_group(pos_)) {
            NestingGuard guard(*this);
            take();
            Constraint c = parse_disjunction();
            expect(Tok::RParen, "to close the constraint");
            return c;
        }
        return parse_relation();
    }

    Constraint parse_relation() {
        if (at(Tok::LBracket)) { // [1, 2] == x
            Domain set = parse_set();
            if (!at(Tok::Eq)) fail(tok(), "expected '==' after the value list, found " + found());
            take();
            Term t = parse_sum();
            reject_top_percent();
            reject_chain();
            return member(t.expr, set);
        }
        Term lhs = parse_sum();
        if (at(Tok::Percent)) return parse_divisibility(lhs);
        if (at_word("in")) {
            take();
            Domain set = parse_set();
            reject_chain();
            return member(lhs.expr, set);
        }
        if (!is_relation(tok().kind)) {
            if (at(Tok::LBracket)) fail(tok(), "a value list needs '==' before it (x == [1, 2])");
            fail(tok(), "expected a relation (==, !=, <=, <, >=, >) or 'in', found " + found());
        }
        const Token& op = take();
        if (op.kind == Tok::Eq && at(Tok::LBracket)) {
            Domain set = parse_set();
            reject_chain();
            return member(lhs.expr, set);
        }
        if (at(Tok::LBracket)) fail(tok(), "a value list can only follow '==' or 'in'");
        Term rhs = parse_sum();
        if (at(Tok::Percent)) { // 0 == a % b
            if (op.kind == Tok::Eq && lhs.value && *lhs.value == 0) {
                take();
                Term divisor = parse_sum();
                if (at(Tok::Percent)) fail(tok(), "'%' may appear only once in a divisibility constraint");
                reject_chain();
                return divides(divisor.expr, rhs.expr);
            }
            fail(tok(), std::string("'%' is divisibility and needs the form '0 == a % b' or 'a % b == 0'; ") +
                            kModHint);
        }
        if (at(Tok::DotDot)) fail(tok(), "a range needs 'in': write 'x in lo..hi'");
        reject_chain();
        switch (op.kind) {
        case Tok::Eq:
            return lhs.expr == rhs.expr;
        case Tok::Ne:
            return lhs.expr != rhs.expr;
        case Tok::Le:
            return lhs.expr <= rhs.expr;
        case Tok::Lt:
            return lhs.expr < rhs.expr;
        case Tok::Ge:
            return lhs.expr >= rhs.expr;
        default:
            return lhs.expr > rhs.expr;
        }
    }

    // dividend % divisor == 0, with whole terms on both sides: `HD % X * Y == 0` is HD divisible by X * Y.
    Constraint parse_divisibility(const Term& dividend) {
        const Token& percent = take();
        Term divisor = parse_sum();
        if (at(Tok::Percent)) fail(tok(), "'%' may appear only once in a divisibility constraint");
        const std::string hint =
            std::string("'a % b' is divisibility and must be compared '== 0'; ") + kModHint;
        if (!at(Tok::Eq)) fail(percent, hint);
        take();
        Term zero = parse_sum();
        if (!zero.value || *zero.value != 0) fail(percent, hint);
        if (at(Tok::Percent)) fail(tok(), "'%' may appear only once in a divisibility constraint");
        reject_chain();
        return divides(divisor.expr, dividend.expr);
    }

    void reject_chain() {
        if (is_relation(tok().kind) || at_word("in")) {
            fail(tok(), "chained relations are not allowed; write two constraints (a <= b; b <= c;)");
        }
    }

    void reject_top_percent() {
        if (at(Tok::Percent)) fail(tok(), std::string("'%' is only divisibility: a % b == 0; ") + kModHint);
    }

    // ---- value sets: lo..hi, [a, b, c..d], each optionally `step m` ---------------------------

    Integer constant_of(const Term& t, const Token& start, const char* what) {
        if (!t.constant) fail(start, std::string(what) + " must be a constant expression");
        if (!t.value) fail(start, std::string("division by zero in ") + what);
        return *t.value;
    }

    Integer parse_constant(const char* what) {
        const Token& start = tok();
        Term t = parse_sum();
        return constant_of(t, start, what);
    }

    Domain parse_set() {
        Domain domain;
        if (at(Tok::LBracket)) {
            const Token& open = take();
            std::vector<Interval> items;
            if (at(Tok::RBracket)) fail(open, "empty value list");
            while (true) {
                const Token& start = tok();
                Integer lo = parse_constant("a listed value");
                Integer hi = lo;
                if (at(Tok::DotDot)) {
                    take();
                    hi = parse_constant("a range bound");
                    check_bounds(lo, hi, start);
                }
                items.push_back({std::move(lo), std::move(hi)});
                if (at(Tok::Comma)) {
                    take();
                    continue;
                }
                if (at(Tok::RBracket)) break;
                fail(tok(), "expected ',' or ']' in the value list, found " + found());
            }
            take();
            domain = union_of(std::move(items));
        } else {
            const Token& start = tok();
            if (!(at(Tok::Number) || at(Tok::Name) || at(Tok::Minus) || at(Tok::LParen))) {
                fail(tok(), "expected a range lo..hi or a value list [a, b, ...], found " + found());
            }
            Integer lo = parse_constant("a range bound");
            if (!at(Tok::DotDot)) fail(tok(), "expected '..' in the range lo..hi, found " + found());
            take();
            Integer hi = parse_constant("a range bound");
            check_bounds(lo, hi, start);
            domain = Domain::range(lo, hi);
        }
        if (at_word("step")) {
            take();
            const Token& start = tok();
            Integer step = parse_constant("the step");
            if (step < 1) fail(start, "the step must be positive, got " + to_string(step));
            domain.restrict_congruence(step, floor_mod(domain.min(), step));
        }
        return domain;
    }

    void check_bounds(const Integer& lo, const Integer& hi, const Token& at_token) {
        if (lo > hi)
            fail(at_token, "lower bound " + to_string(lo) + " is above upper bound " + to_string(hi));
    }

    static Domain union_of(std::vector<Interval> items) {
        bool single_values =
            std::all_of(items.begin(), items.end(), [](const Interval& i) { return i.lo == i.hi; });
        if (single_values) {
            std::vector<Integer> values;
            values.reserve(items.size());
            for (Interval& i : items)
                values.push_back(std::move(i.lo));
            return Domain::values(std::move(values));
        }
        std::sort(items.begin(), items.end(),
                  [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
        std::vector<Interval> merged;
        for (Interval& i : items) {
            if (!merged.empty() && i.lo <= merged.back().hi + 1) {
                if (i.hi > merged.back().hi) merged.back().hi = i.hi;
            } else {
                merged.push_back(std::move(i));
            }
        }
        Domain d = Domain::range(merged.front().lo, merged.back().hi);
        for (std::size_t k = 1; k < merged.size(); ++k)
            d.remove_range(merged[k - 1].hi + 1, merged[k].lo - 1);
        return d;
    }

    // ---- terms -------------------------------------------------------------------------------

    Var variable(const Token& name) {
        if (model_.has(name.text)) return model_.at(name.text);
        return model_.var(name.text, Domain::range(1, default_upper_bound()));
    }

    // A new compound term: its position is the operator's, and it may not be too deep, nor (for a
    // constant, whose value the parser computes) too large.
    Term checked(Term t, const Token& op) {
        if (t.depth > kMaxTermDepth) {
            fail(op, "term too deeply nested (more than " + std::to_string(kMaxTermDepth) + " levels)");
        }
        if (t.constant && t.bits > kMaxConstantBits) {
            fail(op, "constant too large: its value could need more than " +
                         std::to_string(kMaxConstantBits) + " bits");
        }
        if (t.expr.kind() != TermKind::Constant && t.expr.kind() != TermKind::Variable) {
            // The node is new and owned by t alone: the parser may still write its position.
            auto& node = const_cast<TermNode&>(t.expr.node());
            node.line = op.line;
            node.column = op.column;
        }
        return t;
    }

    // Records the exact size of a constant term once its value is known.
    Term sized(Term t) {
        if (t.constant && t.value && t.expr.kind() != TermKind::Constant)
            constant_bits_[&t.expr.node()] = {t.expr.ptr(), t.bits};
        return t;
    }

    // The values of every term with variables fit kMaxTermBits, estimated from the final domains
    // (a declaration may follow the first use of its variable): refused at the first term, inside
    // out and in file order, that could exceed it.
    void check_sizes() {
        const auto check = [&](const Expr& term) {
            detail::fold_term<std::uint64_t>(
                term.node(),
                [&](const TermNode& n) -> std::optional<std::uint64_t> {
                    if (n.kind == TermKind::Constant) return bit_length(n.constant);
                    if (n.kind == TermKind::Variable) {
                        const Domain& d = model_.variables()[static_cast<std::size_t>(n.variable)].domain;
                        return d.empty() ? 1 : std::max(bit_length(d.min()), bit_length(d.max()));
                    }
                    if (auto it = constant_bits_.find(&n); it != constant_bits_.end())
                        return it->second.second;
                    return std::nullopt;
                },
                [&](const TermNode& n, std::span<std::uint64_t> v) {
                    const std::uint64_t bits = estimated_bits(n, v);
                    const std::uint64_t limit = n.model == 0 ? kMaxConstantBits : kMaxTermBits;
                    if (bits > limit) {
                        throw ParseError(file_, n.line, n.column,
                                         "term too large: its values could need " + std::to_string(bits) +
                                             " bits, more than the limit of " + std::to_string(limit) +
                                             " bits");
                    }
                    return bits;
                });
        };
        for (const ConstraintInfo& c : model_.constraints()) {
            std::vector<const Constraint*> pending{&c.constraint};
            while (!pending.empty()) {
                const ConstraintNode& n = pending.back()->node();
                pending.pop_back();
                for (auto part = n.parts.rbegin(); part != n.parts.rend(); ++part)
                    pending.push_back(&*part);
                if (n.lhs) check(*n.lhs);
                if (n.rhs) check(*n.rhs);
            }
        }
        for (const Objective& o : model_.objectives())
            check(o.term);
    }

    // An upper estimate of the bits of a term's values from its operands' estimates.
    static std::uint64_t estimated_bits(const TermNode& n, std::span<std::uint64_t> v) {
        switch (n.kind) {
        case TermKind::Add:
        case TermKind::Sub:
            return std::max(v[0], v[1]) + 1;
        case TermKind::Mul:
            return v[0] + v[1];
        case TermKind::Pow:
            return v[0] <= 1 || n.exponent == 0 ? 1 : v[0] * n.exponent;
        case TermKind::Mod:
            return v[1];
        case TermKind::Min:
        case TermKind::Max:
            return std::max(v[0], v[1]);
        default: // Neg, Abs, Div
            return v[0];
        }
    }

    Term binary(TermKind kind, const Term& a, const Term& b, const Token& op) {
        Term t{a.expr, std::nullopt, a.constant && b.constant, 1, std::max(a.depth, b.depth) + 1, false};
        std::uint64_t bits = std::max(a.bits, b.bits);
        switch (kind) {
        case TermKind::Add:
            t.expr = a.expr + b.expr;
            bits += 1;
            break;
        case TermKind::Sub:
            t.expr = a.expr - b.expr;
            bits += 1;
            break;
        case TermKind::Mul:
            t.expr = a.expr * b.expr;
            bits = a.bits + b.bits;
            break;
        case TermKind::Div:
            t.expr = a.expr / b.expr;
            bits = a.bits;
            break;
        case TermKind::Mod:
            t.expr = a.expr % b.expr;
            bits = b.bits;
            break;
        case TermKind::Min:
            t.expr = min(a.expr, b.expr);
            break;
        case TermKind::Max:
            t.expr = max(a.expr, b.expr);
            break;
        default:
            break;
        }
        t.bits = bits;
        t = checked(std::move(t), op);
        if (t.constant && a.value && b.value) {
            const Integer& x = *a.value;
            const Integer& y = *b.value;
            switch (kind) {
            case TermKind::Add:
                t.value = Integer(x + y);
                break;
            case TermKind::Sub:
                t.value = Integer(x - y);
                break;
            case TermKind::Mul:
                t.value = Integer(x * y);
                break;
            case TermKind::Div:
                if (y != 0) t.value = floor_div(x, y);
                break;
            case TermKind::Mod:
                if (y != 0) t.value = floor_mod(x, y);
                break;
            case TermKind::Min:
                t.value = std::min(x, y);
                break;
            case TermKind::Max:
                t.value = std::max(x, y);
                break;
            default:
                break;
            }
            if (t.value) t.bits = bit_length(*t.value);
        }
        return sized(std::move(t));
    }

    Term parse_sum() {
        Term t = parse_product();
        while (at(Tok::Plus) || at(Tok::Minus)) {
            const Token& op = take();
            Term rhs = parse_product();
            t = binary(op.kind == Tok::Plus ? TermKind::Add : TermKind::Sub, t, rhs, op);
        }
        return t;
    }

    Term parse_product() {
        Term t = parse_unary();
        while (true) {
            if (at(Tok::Star) || at(Tok::Slash)) {
                const Token& op = take();
                Term rhs = parse_unary();
                t = binary(op.kind == Tok::Star ? TermKind::Mul : TermKind::Div, t, rhs, op);
            } else if (at(Tok::Percent) && term_depth_ > 0) {
                fail(tok(),
                     std::string("'%' is only divisibility, at the top of a constraint (a % b == 0); ") +
                         kModHint);
            } else {
                return t;
            }
        }
    }

    // Unary minus binds looser than '^' (-x^2 is -(x^2)) and tighter than '*' and '/'.
    Term parse_unary() {
        if (!at(Tok::Minus)) return parse_power();
        NestingGuard guard(*this);
        const Token& op = take();
        Term a = parse_unary();
        if (a.literal) { // -5 is the constant -5
            a.value = Integer(-*a.value);
            a.expr = Expr(*a.value);
            return a;
        }
        Term t{-a.expr, std::nullopt, a.constant, a.bits, a.depth + 1, false};
        if (a.value) t.value = Integer(-*a.value);
        return sized(checked(std::move(t), op));
    }

    Term parse_power() {
        Term base = parse_primary();
        if (!at(Tok::Caret)) return base;
        NestingGuard guard(*this);
        const Token& op = take();
        const Token& start = tok();
        Term exponent = parse_unary(); // right-associative: x^2^3 is x^(2^3); x^-1 is an error below
        if (!exponent.constant || !exponent.value || *exponent.value < 0) {
            fail(start, "exponent must be a non-negative integer constant");
        }
        if (*exponent.value > kMaxExponent) {
            fail(start, "exponent " + to_string(*exponent.value) + " is too large (the limit is " +
                            std::to_string(kMaxExponent) + ")");
        }
        const auto k = static_cast<unsigned>(*exponent.value);
        Term t{pow(base.expr, k), std::nullopt, base.constant, 1, base.depth + 1, false};
        if (base.value && abs(*base.value) <= 1) {
            t.bits = 1;
        } else {
            t.bits = std::max<std::uint64_t>(base.bits, 1) * std::max(k, 1u);
        }
        t = checked(std::move(t), op);
        if (base.value) {
            t.value = power(*base.value, k);
            t.bits = bit_length(*t.value);
        }
        return sized(std::move(t));
    }

    Term parse_primary() {
        const Token& t = tok();
        switch (t.kind) {
        case Tok::Number: {
            take();
            if (t.text.size() > kMaxDigits) {
                fail(t, "integer literal too long (more than " + std::to_string(kMaxDigits) + " digits)");
            }
            // Not Integer(text): cpp_int reads a leading 0 as octal.
            const std::size_t first_digit = std::min(t.text.find_first_not_of('0'), t.text.size() - 1);
            Integer value(t.text.substr(first_digit));
            Term term{Expr(value), value, true, bit_length(value), 1, true};
            return term;
        }
        case Tok::Name: {
            if (ahead(1).kind == Tok::LParen && !t.quoted) return parse_call();
            take();
            Var v = variable(t);
            const VariableInfo& info = model_.variables()[v.index()];
            std::uint64_t bits = 64;
            if (!info.domain.empty())
                bits = std::max({bits, bit_length(info.domain.min()), bit_length(info.domain.max())});
            return Term{v, std::nullopt, false, bits, 1, false};
        }
        case Tok::LParen: {
            NestingGuard guard(*this);
            take();
            ++term_depth_;
            Term inner = parse_sum();
            expect(Tok::RParen, "to close '('");
            --term_depth_;
            inner.literal = false; // -(5)^2 is not (-5)^2
            return inner;
        }
        case Tok::LBracket:
            fail(t, "a value list can only follow '==' or 'in' (x == [1, 2], x in [1, 2])");
        case Tok::Percent:
            fail(t, std::string("'%' needs a term on its left (a % b == 0); ") + kModHint);
        default:
            break;
        }
        fail(t, "expected a term (a number, a variable, '(' or a function), found " + found());
    }

    Term parse_call() {
        NestingGuard guard(*this);
        const Token& name = take();
        static const std::map<std::string, std::pair<TermKind, int>, std::less<>> functions = {
            {"abs", {TermKind::Abs, 1}},
            {"mod", {TermKind::Mod, 2}},
            {"min", {TermKind::Min, 2}},
            {"max", {TermKind::Max, 2}}};
        auto f = functions.find(name.text);
        if (f == functions.end())
            fail(name, "unknown function '" + name.text + "' (known: abs, min, max, mod)");
        take(); // (
        ++term_depth_;
        std::vector<Term> args;
        if (!at(Tok::RParen)) {
            while (true) {
                args.push_back(parse_sum());
                if (!at(Tok::Comma)) break;
                take();
            }
        }
        expect(Tok::RParen, "to close the arguments of '" + name.text + "'");
        --term_depth_;
        const auto [kind, arity] = f->second;
        const bool variadic =
            kind == TermKind::Min || kind == TermKind::Max; // min(a, b, c) = min(min(a, b), c)
        const auto n = static_cast<int>(args.size());
        if (variadic ? n < arity : n != arity) {
            fail(name, "function '" + name.text + "' takes " + (variadic ? "at least " : "") +
                           std::to_string(arity) + (arity == 1 ? " argument" : " arguments") + ", got " +
                           std::to_string(n));
        }
        if (kind == TermKind::Abs) {
            Term t{abs(args[0].expr), std::nullopt, args[0].constant, args[0].bits, args[0].depth + 1, false};
            if (args[0].value) t.value = Integer(abs(*args[0].value));
            return sized(checked(std::move(t), name));
        }
        Term t = binary(kind, args[0], args[1], name);
        for (std::size_t i = 2; i < args.size(); ++i)
            t = binary(kind, t, args[i], name);
        return t;
    }

    std::string_view source_;
    std::string file_;
    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
    int nesting_ = 0;
    int term_depth_ = 0; // > 0 inside parentheses and function arguments, where '%' is an error
    Model model_;
    std::map<std::string, int, std::less<>> declared_;  // name -> line of its `var`
    std::map<std::string, int, std::less<>> searched_;  // name -> line of its `search`
    std::map<std::string, int, std::less<>> preferred_; // name -> line of its `prefer`
    std::vector<Var> search_order_;
    // The exact sizes of constant compound terms (holding the terms: their addresses are the keys).
    std::map<const TermNode*, std::pair<TermPtr, std::uint64_t>> constant_bits_;
};

} // namespace

Model parse_cint(std::string_view text, const std::string& file) {
    return Parser(text, file).run();
}

Model load_cint(const std::string& path) {
    return parse_cint(read_model_file(path), path);
}

} // namespace constrint

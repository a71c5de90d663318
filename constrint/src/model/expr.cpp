#include "constrint/expr.hpp"

#include "constrint/error.hpp"
#include "model/term_walk.hpp"

namespace constrint {

const char* to_string(TermKind kind) {
    switch (kind) {
    case TermKind::Constant:
        return "constant";
    case TermKind::Variable:
        return "variable";
    case TermKind::Add:
        return "+";
    case TermKind::Sub:
        return "-";
    case TermKind::Neg:
        return "unary -";
    case TermKind::Mul:
        return "*";
    case TermKind::Pow:
        return "^";
    case TermKind::Div:
        return "/";
    case TermKind::Mod:
        return "mod";
    case TermKind::Abs:
        return "abs";
    case TermKind::Min:
        return "min";
    case TermKind::Max:
        return "max";
    }
    return "?";
}

Expr::Expr(const Integer& constant) {
    auto node = std::make_shared<TermNode>();
    node->kind = TermKind::Constant;
    node->constant = constant;
    node_ = std::move(node);
}

TermKind Expr::kind() const {
    return node_->kind;
}

std::uint64_t model_of(const Expr& a, const Expr& b) {
    const std::uint64_t ma = a.node().model, mb = b.node().model;
    if (ma != 0 && mb != 0 && ma != mb) {
        throw ModelError("a term mixes variables of two different models");
    }
    return ma != 0 ? ma : mb;
}

namespace {

Expr make(TermKind kind, const Expr& a, const Expr* b = nullptr, unsigned exponent = 0) {
    auto node = std::make_shared<TermNode>();
    node->kind = kind;
    node->model = b ? model_of(a, *b) : a.node().model;
    node->a = a.ptr();
    if (b) node->b = b->ptr();
    node->exponent = exponent;
    return Expr(std::move(node));
}

} // namespace

Expr operator+(const Expr& a, const Expr& b) {
    return make(TermKind::Add, a, &b);
}
Expr operator-(const Expr& a, const Expr& b) {
    return make(TermKind::Sub, a, &b);
}
Expr operator-(const Expr& a) {
    return make(TermKind::Neg, a);
}
Expr operator*(const Expr& a, const Expr& b) {
    return make(TermKind::Mul, a, &b);
}
Expr operator/(const Expr& a, const Expr& b) {
    return make(TermKind::Div, a, &b);
}
Expr operator%(const Expr& a, const Expr& b) {
    return make(TermKind::Mod, a, &b);
}
Expr abs(const Expr& a) {
    return make(TermKind::Abs, a);
}
Expr min(const Expr& a, const Expr& b) {
    return make(TermKind::Min, a, &b);
}
Expr max(const Expr& a, const Expr& b) {
    return make(TermKind::Max, a, &b);
}

// Exponents beyond this make terms whose values cannot be stored (2^(2^16) already has 65536 bits).
constexpr long long kMaxExponent = 1 << 16;

Expr pow(const Expr& base, long long exponent) {
    if (exponent < 0) {
        throw ModelError("negative exponent " + std::to_string(exponent) +
                         ": powers need a constant exponent >= 0");
    }
    if (exponent > kMaxExponent) {
        throw ModelError("exponent " + std::to_string(exponent) + " exceeds the limit " +
                         std::to_string(kMaxExponent));
    }
    return make(TermKind::Pow, base, nullptr, static_cast<unsigned>(exponent));
}

std::optional<Integer> evaluate_constant(const Expr& term) {
    if (term.node().model != 0) return std::nullopt; // it has variables
    using Value = std::optional<Integer>;
    return detail::fold_term<Value>(
        term.node(),
        [](const TermNode& n) -> std::optional<Value> {
            if (n.kind == TermKind::Constant) return Value(n.constant);
            if (n.kind == TermKind::Variable || n.model != 0) return Value(std::nullopt);
            return std::nullopt;
        },
        [](const TermNode& n, std::span<Value> v) -> Value {
            for (const Value& operand : v) {
                if (!operand) return std::nullopt;
            }
            const Integer& a = *v[0];
            switch (n.kind) {
            case TermKind::Neg:
                return Integer(-a);
            case TermKind::Abs:
                return a < 0 ? Integer(-a) : a;
            case TermKind::Pow:
                return power(a, n.exponent);
            default:
                break;
            }
            const Integer& b = *v[1];
            switch (n.kind) {
            case TermKind::Add:
                return Integer(a + b);
            case TermKind::Sub:
                return Integer(a - b);
            case TermKind::Mul:
                return Integer(a * b);
            case TermKind::Div:
            case TermKind::Mod:
                if (b == 0) throw ModelError("division by zero in a constant term");
                return n.kind == TermKind::Div ? floor_div(a, b) : floor_mod(a, b);
            case TermKind::Min:
                return std::min(a, b);
            case TermKind::Max:
                return std::max(a, b);
            default:
                return std::nullopt;
            }
        });
}

TermNode::~TermNode() {
    // Operands this node alone owns are taken apart here, one at a time, instead of by their own
    // destructors calling the next one's.
    std::vector<TermPtr> pending;
    for (TermPtr* operand : {&a, &b}) {
        if (*operand) pending.push_back(std::move(*operand));
    }
    while (!pending.empty()) {
        TermPtr p = std::move(pending.back());
        pending.pop_back();
        if (p.use_count() != 1) continue; // shared: another owner keeps it
        // The node was created non-const (make_shared<TermNode>) and p is its only owner.
        auto& node = const_cast<TermNode&>(*p);
        if (node.a) pending.push_back(std::move(node.a));
        if (node.b) pending.push_back(std::move(node.b));
    }
}

} // namespace constrint

// Terms: immutable expression trees over integer variables, built with ordinary operators.
#pragma once

#include "constrint/integer.hpp"

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace constrint {

enum class TermKind : std::uint8_t {
    Constant,
    Variable,
    Add, // a + b
    Sub, // a - b
    Neg, // -a
    Mul, // a * b
    Pow, // a ^ exponent, exponent a constant >= 0
    Div, // floor(a / b), b != 0
    Mod, // a - b * floor(a / b), b != 0 (the sign of b, as in Python)
    Abs,
    Min,
    Max,
};

const char* to_string(TermKind kind);

struct TermNode;
using TermPtr = std::shared_ptr<const TermNode>;

// A term of a model. Values of type Expr are cheap handles; the tree below is shared and never
// changes. A compound term becomes one auxiliary variable of the solver (the paper's background
// variable), so a sub-term used twice through the same Expr is computed once.
class Expr {
  public:
    Expr(const Integer& constant);                                           // NOLINT: integers are terms
    template <std::integral T> Expr(T constant) : Expr(Integer(constant)) {} // NOLINT
    explicit Expr(TermPtr node) : node_(std::move(node)) {}

    const TermNode& node() const { return *node_; }
    const TermPtr& ptr() const { return node_; }
    TermKind kind() const;
    bool is_constant() const { return kind() == TermKind::Constant; }

  private:
    TermPtr node_;
};

// The sizes of numbers ConstrINT computes (docs/solver.md): the values of a term with variables
// (the bounds of its auxiliary variable) have at most kMaxTermBits bits, constants (terms without
// variables) at most kMaxConstantBits. A term that could exceed them is refused before its bounds
// are computed ("term too large"): products and powers of numbers this size take milliseconds,
// beyond it single operations could take minutes.
inline constexpr std::uint64_t kMaxTermBits = std::uint64_t{1} << 16;
inline constexpr std::uint64_t kMaxConstantBits = std::uint64_t{1} << 18;

struct TermNode {
    TermKind kind;
    Integer constant;         // Constant
    unsigned exponent = 0;    // Pow
    int variable = -1;        // Variable: index in its model
    std::uint64_t model = 0;  // Variable: id of the owning model; 0 for terms without variables
    std::string name;         // Variable
    TermPtr a, b;             // operands (b unused for unary kinds)
    int line = 0, column = 0; // where the term was read (its operator), 0 when not from a file

    TermNode() = default;
    TermNode(const TermNode&) = delete;
    TermNode& operator=(const TermNode&) = delete;
    // Releases the operands without recursion, so that a term of any depth can be destroyed.
    ~TermNode();
};

// A variable of a model, usable wherever a term is.
class Var : public Expr {
  public:
    Var(TermPtr node) : Expr(std::move(node)) {} // NOLINT
    int index() const { return node().variable; }
    const std::string& name() const { return node().name; }
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);   // floor division
Expr operator%(const Expr& a, const Expr& b);   // floor modulo (sign of the divisor)
Expr pow(const Expr& base, long long exponent); // throws ModelError for exponent < 0
Expr abs(const Expr& a);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);

// The id of the model whose variables the term uses (0: none); throws ModelError when a term
// mixes variables of two models.
std::uint64_t model_of(const Expr& a, const Expr& b);

// Evaluates a term whose leaves are all constants; nothing when it has a variable.
// Throws ModelError on division by zero.
std::optional<Integer> evaluate_constant(const Expr& term);

} // namespace constrint

namespace constrint {

// The value of a term when every variable with index i has the value values[i].
// Throws ModelError on division by zero.
Integer evaluate(const Expr& term, const std::vector<Integer>& values);

} // namespace constrint

// A model: variables with their domains, constraints, preferences and objectives.
#pragma once

#include "constrint/constraint.hpp"
#include "constrint/domain.hpp"
#include "constrint/expr.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace constrint {

// The value choice for a variable during search.
enum class Prefer : std::uint8_t {
    Min,       // smallest value first (x = min, then x > min)
    Max,       // largest value first (x = max, then x < max)
    SplitLow,  // lower half first (x <= mid, then x > mid): for huge ranges
    SplitHigh, // upper half first (x > mid, then x <= mid)
};

const char* to_string(Prefer prefer);

enum class Sense : std::uint8_t { Minimize, Maximize };

// Where a constraint came from, for explanations and messages.
struct Origin {
    std::string file; // empty for constraints added through the API
    int line = 0;
    int column = 0;   // of the constraint's first token
    std::string text; // the source text or a label
};

struct Objective {
    Expr term;
    Sense sense;
    Origin origin = {}; // file and line when read from a file
};

struct VariableInfo {
    std::string name;
    Domain domain;
    Prefer prefer = Prefer::Min;
    bool prefer_given = false; // set by Model::prefer; otherwise an objective may choose the direction
};

struct ConstraintInfo {
    Constraint constraint;
    Origin origin;
};

// The default upper bound of a variable declared without one (the `.cint` format's undeclared
// variables are positive integers in [1, kDefaultUpperBound]).
Integer default_upper_bound(); // 2^62

class Model {
  public:
    Model();
    Model(const Model&) = default; // a copy shares the variable identity of the original
    Model& operator=(const Model&) = default;
    Model(Model&&) noexcept = default;
    Model& operator=(Model&&) noexcept = default;

    // New variables; names must be unique and non-empty. An empty domain is allowed (the model
    // is then unsatisfiable).
    Var var(std::string name, const Integer& lo, const Integer& hi);
    Var var(std::string name, std::vector<Integer> values);
    Var var(std::string name, Domain domain);

    bool has(std::string_view name) const;
    Var at(std::string_view name) const; // throws ModelError "unknown variable 'x'"
    Var at(int index) const;
    void set_domain(const Var& x, Domain domain);

    // Adds a constraint and returns its index; throws ModelError for terms of another model.
    std::size_t add(const Constraint& constraint, Origin origin = {});
    std::size_t add(const Constraint& constraint, std::string label);

    void prefer(const Var& x, Prefer prefer);
    // Decision order: these variables first, in this order; then every other variable in
    // declaration order. Calling it again replaces the order.
    void search(std::vector<Var> order);
    void maximize(const Expr& term, Origin origin = {}); // several objectives form a lexicographic order
    void minimize(const Expr& term, Origin origin = {});
    void clear_objectives() { objectives_.clear(); } // a satisfaction model (the solver's parts)

    std::uint64_t id() const { return id_; }
    const std::vector<VariableInfo>& variables() const { return variables_; }
    const std::vector<ConstraintInfo>& constraints() const { return constraints_; }
    const std::vector<Objective>& objectives() const { return objectives_; }
    const std::vector<int>& search_order() const { return search_order_; }

    // Throws ModelError when the term uses variables of another model.
    void check_owned(const Expr& term) const;
    void check_owned(const Constraint& constraint) const;

  private:
    std::uint64_t id_;
    std::vector<VariableInfo> variables_;
    std::vector<Var> handles_;
    std::map<std::string, int, std::less<>> index_;
    std::vector<ConstraintInfo> constraints_;
    std::vector<Objective> objectives_;
    std::vector<int> search_order_;
};

} // namespace constrint

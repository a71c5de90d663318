// Turns a FlatZinc syntax tree into a ConstrINT model and propagation store: every FlatZinc
// variable becomes a model variable (the same index in the store), every constraint one native
// propagator (or a few) posted straight into the store, the search annotations search phases.
#pragma once

#include "constrint/model.hpp"
#include "engine/branching.hpp"
#include "engine/compile.hpp"
#include "flatzinc/ast.hpp"
#include "flatzinc/deadline.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace constrint::flatzinc {

// An argument element: a constant or a variable.
struct Ref {
    std::optional<engine::VarId> var; // nothing: the constant
    Integer constant;
    bool is_bool = false;
};

// What the solution printer needs for one output_var / output_array declaration.
struct Output {
    std::string name;
    bool is_array = false;
    std::vector<Domain> index_sets; // output_array's index ranges (array1d, array2d, ...)
    std::vector<Ref> elements;
};

struct Program {
    std::shared_ptr<Model> model;
    std::unique_ptr<engine::Compiled> compiled;
    std::vector<engine::Phase> phases; // the annotations' (unless free search), then the defaults
    SolveItem::Goal goal = SolveItem::Goal::Satisfy;
    std::vector<Output> outputs;
    // Per constraint item (in the model's order): the ids of the propagators it posted, [first, last).
    std::vector<std::pair<int, int>> constraint_propagators;
};

// One independent part of the model, to be searched alone (flatzinc/parts.hpp): only its
// constraints are posted, and the model variables get these domains (the others' fixed).
struct PartOnly {
    std::vector<bool> constraints; // per constraint item: posted
    std::vector<Domain> domains;   // per model variable
};

// Unbounded `var int` declarations range over [-2^kUnboundedBits, 2^kUnboundedBits].
constexpr unsigned kUnboundedBits = 127;
// The most variables a FlatZinc model may declare (each costs a few hundred bytes; an index set
// like 1..10^11 is refused before anything is allocated).
constexpr std::size_t kMaxVariables = std::size_t{1} << 22;

class Builder {
  public:
    Builder(const Ast& ast, std::string file, Deadline& deadline)
        : ast_(ast), file_(std::move(file)), deadline_(deadline) {}
    Program build(bool free_search, const PartOnly* part = nullptr);

    // For the builtins (builtins.cpp): arguments read as the constraint needs them; each throws
    // ParseError at the argument's position when it has the wrong kind.
    Ref ref(const Node& n);
    std::vector<Ref> refs(const Node& n);
    engine::VarId var(const Node& n); // a constant becomes a fixed store variable
    std::vector<engine::VarId> vars(const Node& n);
    Integer constant(const Node& n);
    std::vector<Integer> constants(const Node& n);
    Domain set(const Node& n);
    engine::VarId constant_var(const Integer& value);
    engine::Store& store() { return program_.compiled->store; }
    engine::VarId new_var(const Integer& lo, const Integer& hi) {
        return store().new_var(Domain::range(lo, hi));
    }
    void post(std::unique_ptr<engine::Propagator> p) { store().add_propagator(std::move(p)); }
    [[noreturn]] void fail(const Position& at, const std::string& message) const;
    // A count of a constant value in `vars` (constrint_count_eq): counts of several values in one
    // array get their implied sums (CardinalitySums) once every constraint is posted.
    void note_count(const std::vector<engine::VarId>& vars, const Integer& value, engine::VarId count);

  private:
    struct Symbol {
        enum class Kind : std::uint8_t { Parameter, Variable, VariableArray } kind;
        const Declaration* declaration = nullptr;
        std::vector<Ref> elements; // Variable: one; VariableArray: all; resolved parameter: its values
        // Parameters are resolved when declared (FlatZinc declares every name before its use), so
        // that a use never follows a chain of definitions.
        bool resolved = false;
        std::optional<Domain> set; // a resolved `set of int` parameter
    };

    void declare(const Declaration& d);
    void resolve_parameter(const Declaration& d, Symbol& s);
    Ref declare_variable(const Declaration& d, const std::string& name, const std::optional<Node>& value);
    const Symbol& symbol(const Node& n) const;
    void add_outputs();
    void add_phases(const Node& annotation, std::vector<engine::Phase>& into);
    void add_default_phases();
    void add_objective(const SolveItem& solve);
    void post_cardinality_sums();

    const Ast& ast_;
    std::string file_;
    Deadline& deadline_;
    Program program_;
    std::map<std::string, Symbol, std::less<>> symbols_;
    std::map<Integer, engine::VarId> constants_;
    std::vector<bool> introduced_; // per model variable: declared var_is_introduced
    std::vector<engine::Phase> annotated_phases_;
    struct CountedValues {
        std::vector<Integer> values; // distinct
        std::vector<engine::VarId> counts;
    };
    std::map<std::vector<engine::VarId>, CountedValues> counted_; // by counted array
};

// Posts one FlatZinc constraint (builtins.cpp); throws ParseError for an unknown one.
void post_builtin(Builder& b, const ConstraintItem& c);
// Whether post_builtin knows the constraint `name`.
bool is_builtin(std::string_view name);

} // namespace constrint::flatzinc

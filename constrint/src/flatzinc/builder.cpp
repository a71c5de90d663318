#include "flatzinc/builder.hpp"

#include "constrint/error.hpp"
#include "propagators/cardinality_sums.hpp"

#include <algorithm>

namespace constrint::flatzinc {

namespace {

bool has_annotation(const std::vector<Node>& annotations, std::string_view name) {
    for (const Node& a : annotations) {
        if ((a.kind == Node::Kind::Ident || a.kind == Node::Kind::Call) && a.text == name) return true;
    }
    return false;
}

const Node* find_annotation(const std::vector<Node>& annotations, std::string_view name) {
    for (const Node& a : annotations) {
        if ((a.kind == Node::Kind::Ident || a.kind == Node::Kind::Call) && a.text == name) return &a;
    }
    return nullptr;
}

const char* type_name(BaseType t) {
    switch (t) {
    case BaseType::Bool:
        return "bool";
    case BaseType::Int:
        return "int";
    case BaseType::Float:
        return "float";
    case BaseType::Set:
        return "set";
    }
    return "?";
}

} // namespace

void Builder::fail(const Position& at, const std::string& message) const {
    throw ParseError(file_, at.line, at.column, message);
}

const Builder::Symbol& Builder::symbol(const Node& n) const {
    auto it = symbols_.find(n.text);
    if (it == symbols_.end()) fail(n.pos, "unknown identifier '" + n.text + "'");
    return it->second;
}

Ref Builder::ref(const Node& n) {
    switch (n.kind) {
    case Node::Kind::Int:
        return Ref{std::nullopt, n.value, false};
    case Node::Kind::Bool:
        return Ref{std::nullopt, n.value, true};
    case Node::Kind::Ident: {
        const Symbol& s = symbol(n);
        if (s.kind == Symbol::Kind::Variable) return s.elements[0];
        if (s.kind == Symbol::Kind::Parameter && s.resolved && !s.set && !s.declaration->type.is_array) {
            return s.elements[0];
        }
        if (s.kind == Symbol::Kind::Parameter && s.declaration->type.base == BaseType::Float)
            fail(n.pos, "float values are not supported by ConstrINT");
        fail(n.pos, "'" + n.text + "' is not a single integer or Boolean here");
    }
    case Node::Kind::Access: {
        // A variable array's elements are read in place (no copy of the whole array per access).
        const Symbol& s = symbol(n);
        const bool resolved_array =
            s.kind == Symbol::Kind::Parameter && s.resolved && s.declaration->type.is_array;
        if (s.kind != Symbol::Kind::VariableArray && !resolved_array)
            fail(n.pos, "expected an array argument");
        const std::vector<Ref>& all = s.elements;
        if (n.value < 1 || n.value > all.size()) {
            fail(n.pos, "index " + to_string(n.value) + " out of the range 1.." + std::to_string(all.size()) +
                            " of '" + n.text + "'");
        }
        return all[static_cast<std::size_t>(n.value - 1)];
    }
    case Node::Kind::Float:
        fail(n.pos, "float values are not supported by ConstrINT");
    default:
        fail(n.pos, "expected an integer or Boolean argument");
    }
}

std::vector<Ref> Builder::refs(const Node& n) {
    if (n.kind == Node::Kind::Array) {
        std::vector<Ref> all;
        all.reserve(n.items.size());
        for (const Node& item : n.items)
            all.push_back(ref(item));
        return all;
    }
    if (n.kind == Node::Kind::Ident) {
        const Symbol& s = symbol(n);
        if (s.kind == Symbol::Kind::VariableArray) return s.elements;
        if (s.kind == Symbol::Kind::Parameter && s.resolved && s.declaration->type.is_array)
            return s.elements;
    }
    fail(n.pos, "expected an array argument");
}

engine::VarId Builder::constant_var(const Integer& value) {
    auto it = constants_.find(value);
    if (it != constants_.end()) return it->second;
    const engine::VarId x = store().new_var(Domain::single(value));
    constants_.emplace(value, x);
    return x;
}

engine::VarId Builder::var(const Node& n) {
    const Ref r = ref(n);
    return r.var ? *r.var : constant_var(r.constant);
}

std::vector<engine::VarId> Builder::vars(const Node& n) {
    std::vector<engine::VarId> all;
    for (const Ref& r : refs(n))
        all.push_back(r.var ? *r.var : constant_var(r.constant));
    return all;
}

Integer Builder::constant(const Node& n) {
    const Ref r = ref(n);
    if (r.var) {
        // A variable fixed by its declaration is a constant too.
        const Domain& d = program_.model->variables()[static_cast<std::size_t>(*r.var)].domain;
        if (d.fixed()) return d.value();
        fail(n.pos, "expected a constant, found a variable");
    }
    return r.constant;
}

std::vector<Integer> Builder::constants(const Node& n) {
    std::vector<Integer> all;
    const std::vector<Ref> rs = refs(n);
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i].var)
            fail(n.pos,
                 "expected an array of constants, element " + std::to_string(i + 1) + " is a variable");
        all.push_back(rs[i].constant);
    }
    return all;
}

Domain Builder::set(const Node& n) {
    if (n.kind == Node::Kind::Set) return n.set;
    if (n.kind == Node::Kind::Ident) {
        const Symbol& s = symbol(n);
        if (s.kind == Symbol::Kind::Parameter && s.set) return *s.set;
        if (s.kind != Symbol::Kind::Parameter) fail(n.pos, "set variables are not supported by ConstrINT");
    }
    fail(n.pos, "expected a set of integers");
}

Ref Builder::declare_variable(const Declaration& d, const std::string& name,
                              const std::optional<Node>& value) {
    deadline_.check();
    const bool is_bool = d.type.base == BaseType::Bool;
    Domain domain = is_bool         ? Domain::range(0, 1)
                    : d.type.domain ? *d.type.domain
                                    : Domain::range(-power(2, kUnboundedBits), power(2, kUnboundedBits));
    if (value) {
        // `var int: x = y;` is y under a second name; `var int: x = 3;` is fixed.
        const Ref r = ref(*value);
        if (r.var) {
            Domain narrowed = program_.model->variables()[static_cast<std::size_t>(*r.var)].domain;
            narrowed.intersect(domain);
            program_.model->set_domain(program_.model->at(*r.var), std::move(narrowed));
            return Ref{r.var, 0, is_bool};
        }
        domain.intersect(Domain::single(r.constant));
    }
    const Var x = program_.model->var(name, std::move(domain));
    introduced_.push_back(has_annotation(d.annotations, "var_is_introduced"));
    return Ref{x.index(), 0, is_bool};
}

namespace {

// A use of `name` inside a definition, or nullptr. FlatZinc names are declared before their use,
// so a definition that uses its own name is circular.
const Node* use_of(const Node& value, const std::string& name) {
    std::vector<const Node*> pending{&value};
    while (!pending.empty()) {
        const Node* n = pending.back();
        pending.pop_back();
        if ((n->kind == Node::Kind::Ident || n->kind == Node::Kind::Access) && n->text == name) return n;
        for (const Node& item : n->items)
            pending.push_back(&item);
    }
    return nullptr;
}

} // namespace

void Builder::resolve_parameter(const Declaration& d, Symbol& s) {
    if (d.type.base == BaseType::Set && !d.type.is_array) {
        s.set = set(*d.value);
    } else if (d.type.base == BaseType::Int || d.type.base == BaseType::Bool) {
        if (d.type.is_array) {
            s.elements = refs(*d.value);
        } else {
            s.elements.push_back(ref(*d.value));
        }
    } else {
        return; // float and set-array parameters: refused where they are used
    }
    s.resolved = true;
}

void Builder::declare(const Declaration& d) {
    if (symbols_.count(d.name)) fail(d.pos, "'" + d.name + "' is declared twice");
    if (d.value) {
        if (const Node* self = use_of(*d.value, d.name)) {
            fail(self->pos, std::string(d.type.is_var ? "variable '" : "parameter '") + d.name +
                                "' is defined through itself");
        }
    }
    if (d.type.is_var) {
        const Integer count = d.type.is_array && !d.value ? d.type.array_size : Integer(1);
        if (count > kMaxVariables - program_.model->variables().size()) {
            fail(d.pos, "'" + d.name + "' makes " + to_string(count) +
                            " more variables: more than the limit of " + std::to_string(kMaxVariables) +
                            " variables in a model");
        }
    }
    Symbol s{Symbol::Kind::Parameter, &d, {}, false, std::nullopt};
    if (d.type.is_var) {
        if (d.type.base == BaseType::Float || d.type.base == BaseType::Set) {
            fail(d.pos, std::string(type_name(d.type.base)) + " variables are not supported by ConstrINT ('" +
                            d.name + "')");
        }
        if (d.type.is_array) {
            s.kind = Symbol::Kind::VariableArray;
            if (d.value) {
                s.elements = refs(*d.value);
                for (Ref& r : s.elements)
                    r.is_bool = d.type.base == BaseType::Bool;
            } else {
                for (Integer i = 1; i <= d.type.array_size; ++i) {
                    s.elements.push_back(
                        declare_variable(d, d.name + "[" + to_string(i) + "]", std::nullopt));
                }
            }
        } else {
            s.kind = Symbol::Kind::Variable;
            s.elements.push_back(declare_variable(d, d.name, d.value));
        }
    } else if (!d.value) {
        fail(d.pos, "parameter '" + d.name + "' has no value");
    } else {
        resolve_parameter(d, s);
    }
    symbols_.emplace(d.name, std::move(s));
}

void Builder::add_outputs() {
    for (const Declaration& d : ast_.declarations) {
        const Symbol& s = symbols_.at(d.name);
        if (s.kind == Symbol::Kind::Parameter) continue;
        if (has_annotation(d.annotations, "output_var")) {
            program_.outputs.push_back(Output{d.name, false, {}, s.elements});
        } else if (const Node* a = find_annotation(d.annotations, "output_array")) {
            Output out{d.name, true, {}, s.elements};
            if (a->items.size() != 1 || a->items[0].kind != Node::Kind::Array)
                fail(a->pos, "output_array expects a list of index sets");
            for (const Node& index : a->items[0].items)
                out.index_sets.push_back(set(index));
            program_.outputs.push_back(std::move(out));
        }
    }
}

void Builder::add_phases(const Node& a, std::vector<engine::Phase>& into) {
    if (a.kind != Node::Kind::Call) return;
    if (a.text == "seq_search" || a.text == "warm_start_array") {
        if (a.text == "seq_search" && a.items.size() == 1 && a.items[0].kind == Node::Kind::Array) {
            for (const Node& inner : a.items[0].items)
                add_phases(inner, into);
        }
        return;
    }
    if (a.text != "int_search" && a.text != "bool_search")
        return; // float_search, set_search, ...: no such variables
    if (a.items.size() < 3)
        fail(a.pos, a.text + " expects (variables, variable choice, value choice, strategy)");
    engine::Phase phase;
    for (const Ref& r : refs(a.items[0])) {
        if (r.var) phase.vars.push_back(*r.var);
    }
    const std::string& select = a.items[1].text;
    const std::string& value = a.items[2].text;
    using engine::VarSelect;
    // Gecode's choices where ConstrINT has no exact equivalent: the nearest one.
    if (select == "input_order" || select == "occurrence")
        phase.select = VarSelect::InputOrder;
    else if (select == "first_fail" || select == "most_constrained" || select == "max_regret")
        phase.select = VarSelect::FirstFail;
    else if (select == "dom_w_deg")
        phase.select = VarSelect::AfcSizeMax;
    else if (select == "anti_first_fail")
        phase.select = VarSelect::AntiFirstFail;
    else if (select == "smallest")
        phase.select = VarSelect::Smallest;
    else if (select == "largest")
        phase.select = VarSelect::Largest;
    else
        fail(a.items[1].pos, "unknown variable choice '" + select + "'");
    if (value == "indomain_min" || value == "indomain" || value == "indomain_median" ||
        value == "indomain_middle" || value == "indomain_random" || value == "indomain_interval")
        phase.value = Prefer::Min;
    else if (value == "indomain_max")
        phase.value = Prefer::Max;
    else if (value == "indomain_split")
        phase.value = Prefer::SplitLow;
    else if (value == "indomain_reverse_split")
        phase.value = Prefer::SplitHigh;
    else
        fail(a.items[2].pos, "unknown value choice '" + value + "'");
    into.push_back(std::move(phase));
}

// After the annotated phases: the model's own variables smallest domain first, then those the
// compiler introduced (mostly defined by the others).
void Builder::add_default_phases() {
    engine::Phase own{{}, engine::VarSelect::AfcSizeMax, Prefer::Min};
    engine::Phase introduced{{}, engine::VarSelect::AfcSizeMax, Prefer::Min};
    for (std::size_t i = 0; i < introduced_.size(); ++i) {
        (introduced_[i] ? introduced : own).vars.push_back(static_cast<engine::VarId>(i));
    }
    program_.phases.push_back(std::move(own));
    program_.phases.push_back(std::move(introduced));
}

void Builder::note_count(const std::vector<engine::VarId>& vars, const Integer& value, engine::VarId count) {
    CountedValues& counted = counted_[vars];
    if (std::find(counted.values.begin(), counted.values.end(), value) != counted.values.end()) return;
    counted.values.push_back(value);
    counted.counts.push_back(count);
}

void Builder::post_cardinality_sums() {
    for (auto& [vars, counted] : counted_) {
        if (counted.values.size() < 2) continue; // one Count says all there is
        post(std::make_unique<engine::CardinalitySums>(vars, std::move(counted.values),
                                                       std::move(counted.counts)));
    }
}

void Builder::add_objective(const SolveItem& solve) {
    program_.goal = solve.goal;
    if (solve.goal == SolveItem::Goal::Satisfy) return;
    const Ref r = ref(*solve.objective);
    const Var objective = r.var ? program_.model->at(*r.var)
                                : program_.model->var("objective constant", r.constant, r.constant);
    if (!r.var) introduced_.push_back(true);
    if (solve.goal == SolveItem::Goal::Minimize)
        program_.model->minimize(objective);
    else
        program_.model->maximize(objective);
}

Program Builder::build(bool free_search, const PartOnly* part) {
    program_.model = std::make_shared<Model>();
    for (const Declaration& d : ast_.declarations)
        declare(d);
    add_objective(*ast_.solve);
    if (part) {
        for (std::size_t v = 0; v < part->domains.size(); ++v)
            program_.model->set_domain(program_.model->at(static_cast<int>(v)), part->domains[v]);
    }
    program_.compiled = engine::compile(*program_.model);
    // A variable declared with an empty domain (`var 5..1: x`) makes the model unsatisfiable
    // whatever its constraints say; the builtins read the bounds of their arguments, which an empty
    // domain has not, so they are then only checked to exist.
    bool empty_domain = false;
    for (engine::VarId x = 0; x < store().num_vars(); ++x)
        empty_domain = empty_domain || store().dom(x).empty();
    for (std::size_t i = 0; i < ast_.constraints.size(); ++i) {
        const ConstraintItem& c = ast_.constraints[i];
        deadline_.check();
        const int first = store().num_propagators();
        if ((!part || part->constraints[i]) && (!empty_domain || !is_builtin(c.name))) post_builtin(*this, c);
        program_.constraint_propagators.emplace_back(first, store().num_propagators());
    }
    post_cardinality_sums();
    add_outputs();
    if (!free_search) {
        for (const Node& a : ast_.solve->annotations)
            add_phases(a, program_.phases);
    }
    add_default_phases();
    return std::move(program_);
}

} // namespace constrint::flatzinc

#include "flatzinc/output.hpp"

namespace constrint::flatzinc {

namespace {

void write_value(std::ostream& out, const Ref& r, const std::vector<Integer>& values) {
    const Integer& v = r.var ? values[static_cast<std::size_t>(*r.var)] : r.constant;
    if (r.is_bool) {
        out << (v != 0 ? "true" : "false");
    } else {
        out << to_string(v);
    }
}

void write_index_set(std::ostream& out, const Domain& set) {
    if (set.empty()) {
        out << "1..0";
    } else {
        out << to_string(set.min()) << ".." << to_string(set.max());
    }
}

} // namespace

void write_solution(std::ostream& out, const std::vector<Output>& outputs,
                    const std::vector<Integer>& values) {
    for (const Output& o : outputs) {
        out << o.name << " = ";
        if (!o.is_array) {
            write_value(out, o.elements.at(0), values);
        } else {
            out << "array" << o.index_sets.size() << "d(";
            for (const Domain& index : o.index_sets) {
                write_index_set(out, index);
                out << ", ";
            }
            out << "[";
            for (std::size_t i = 0; i < o.elements.size(); ++i) {
                if (i) out << ", ";
                write_value(out, o.elements[i], values);
            }
            out << "])";
        }
        out << ";\n";
    }
    out << "----------\n";
}

} // namespace constrint::flatzinc

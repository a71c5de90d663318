// Python ints of any size <-> constrint::Integer, exact both ways (through their decimal text).
#pragma once

#include <constrint/integer.hpp>
#include <pybind11/pybind11.h>

namespace pybind11::detail {

template <> struct type_caster<constrint::Integer> {
    PYBIND11_TYPE_CASTER(constrint::Integer, const_name("int"));

    bool load(handle source, bool) {
        if (!PyLong_Check(source.ptr())) return false; // no silent float or bool-to-int narrowing
        if (PyBool_Check(source.ptr())) return false;
        const std::string text = str(source);
        auto parsed = constrint::parse_integer(text);
        if (!parsed) return false;
        value = std::move(*parsed);
        return true;
    }

    static handle cast(const constrint::Integer& source, return_value_policy, handle) {
        const std::string text = source.str();
        return PyLong_FromString(text.c_str(), nullptr, 10);
    }
};

} // namespace pybind11::detail

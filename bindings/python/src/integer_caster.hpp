// Python ints of any size <-> constrint::Integer, exact both ways.
#pragma once

#include <constrint/integer.hpp>
#include <pybind11/pybind11.h>

namespace pybind11::detail {

template <> struct type_caster<constrint::Integer> {
    PYBIND11_TYPE_CASTER(constrint::Integer, const_name("int"));

    // Through hexadecimal text: Python limits decimal conversions of ints (4300 digits by default),
    // not those in a power-of-two base, and values may have up to kMaxConstantBits bits.
    bool load(handle source, bool) {
        if (!PyLong_Check(source.ptr())) return false; // no silent float or bool-to-int narrowing
        if (PyBool_Check(source.ptr())) return false;
        const object hex = reinterpret_steal<object>(PyNumber_ToBase(source.ptr(), 16));
        if (!hex) throw error_already_set();
        std::string text = str(hex); // "0x1f" or "-0x1f"
        const bool negative = !text.empty() && text[0] == '-';
        value = constrint::Integer(text.substr(negative ? 1 : 0));
        if (negative) value = -value;
        return true;
    }

    static handle cast(const constrint::Integer& source, return_value_policy, handle) {
        const constrint::Integer magnitude = abs(source);
        const std::string text = (source < 0 ? "-" : "") + magnitude.str(0, std::ios_base::hex);
        return PyLong_FromString(text.c_str(), nullptr, 16);
    }
};

} // namespace pybind11::detail

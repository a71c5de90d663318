// Views: a relation's side read as scale * x + offset of one variable (or a constant), so that
// `q[i] + i != q[j] + j` needs no auxiliary variables (Gecode's offset and scale views).
#pragma once

#include "engine/store.hpp"
#include "machine_word.hpp"

#include <optional>

namespace constrint::engine {

struct View {
    VarId var = -1;    // -1: the constant `offset`
    Integer scale = 1; // never 0 for a variable
    Integer offset = 0;

    bool constant() const { return var < 0; }
    bool identity() const { return scale == 1 && offset == 0; }
    bool fixed(const Store& s) const { return constant() || s.fixed(var); }
    Integer value(const Store& s) const { return constant() ? offset : map(s.value(var)); }
    Integer min(const Store& s) const {
        if (constant()) return offset;
        return map(scale > 0 ? s.min(var) : s.max(var));
    }
    Integer max(const Store& s) const {
        if (constant()) return offset;
        return map(scale > 0 ? s.max(var) : s.min(var));
    }
    bool contains(const Store& s, const Integer& v) const {
        if (constant()) return v == offset;
        if (identity()) return s.dom(var).contains(v);
        const Integer shifted = v - offset;
        return shifted % scale == 0 && s.dom(var).contains(shifted / scale);
    }
    Domain domain(const Store& s) const {
        if (constant()) return Domain::single(offset);
        return identity() ? s.dom(var) : s.dom(var).scaled(scale).shifted(offset);
    }

    // Narrowing; false when the view would have no value left.
    bool set_min(Store& s, const Integer& v) const {
        if (constant()) return offset >= v;
        if (identity()) return s.set_min(var, v);
        return scale > 0 ? s.set_min(var, ceil_div(v - offset, scale))
                         : s.set_max(var, floor_div(v - offset, scale));
    }
    bool set_max(Store& s, const Integer& v) const {
        if (constant()) return offset <= v;
        if (identity()) return s.set_max(var, v);
        return scale > 0 ? s.set_max(var, floor_div(v - offset, scale))
                         : s.set_min(var, ceil_div(v - offset, scale));
    }
    bool assign(Store& s, const Integer& v) const {
        if (constant()) return offset == v;
        if (identity()) return s.assign(var, v);
        const Integer shifted = v - offset;
        return shifted % scale == 0 && s.assign(var, shifted / scale);
    }
    bool remove(Store& s, const Integer& v) const {
        if (constant()) return offset != v;
        if (identity()) return s.remove(var, v);
        const Integer shifted = v - offset;
        return shifted % scale != 0 || s.remove(var, shifted / scale);
    }
    bool intersect(Store& s, const Domain& d) const {
        if (constant()) return d.contains(offset);
        if (identity()) return s.intersect(var, d);
        return s.intersect(var, d.shifted(-offset).divided_exactly(scale));
    }

  private:
    Integer map(const Integer& x) const { return identity() ? x : Integer(scale * x + offset); }
};

// A view whose scale and offset fit machine words, read and narrowed in 64-bit arithmetic: the fast
// path of the view propagators. Each operation answers false (or nothing) when a bound or a step
// does not fit a word; the caller then takes the View's Integer operations.
struct WordView {
    VarId var = -1; // -1: the constant `offset`
    Word scale = 1;
    Word offset = 0;

    // Nothing when the view's scale or offset does not fit a word.
    static std::optional<WordView> of(const View& v) {
        WordView w;
        w.var = v.var;
        if (!read_word(v.scale, w.scale) || !read_word(v.offset, w.offset)) return std::nullopt;
        return w;
    }

    bool min(const Store& s, Word& out) const {
        if (var < 0) return out = offset, true;
        Word lo = 0, hi = 0;
        return s.word_bounds(var, lo, hi) && map(scale > 0 ? lo : hi, out);
    }
    bool max(const Store& s, Word& out) const {
        if (var < 0) return out = offset, true;
        Word lo = 0, hi = 0;
        return s.word_bounds(var, lo, hi) && map(scale > 0 ? hi : lo, out);
    }

    // Narrowing: nothing when a step does not fit a word, else the store's answer (false: no value left).
    std::optional<bool> set_min(Store& s, Word v) const {
        if (var < 0) return offset >= v;
        Word shifted = 0, bound = 0;
        if (!subtract_word(v, offset, shifted)) return std::nullopt;
        if (scale > 0 ? !ceil_div_word(shifted, scale, bound) : !floor_div_word(shifted, scale, bound))
            return std::nullopt;
        return scale > 0 ? s.set_min_word(var, bound) : s.set_max_word(var, bound);
    }
    std::optional<bool> set_max(Store& s, Word v) const {
        if (var < 0) return offset <= v;
        Word shifted = 0, bound = 0;
        if (!subtract_word(v, offset, shifted)) return std::nullopt;
        if (scale > 0 ? !floor_div_word(shifted, scale, bound) : !ceil_div_word(shifted, scale, bound))
            return std::nullopt;
        return scale > 0 ? s.set_max_word(var, bound) : s.set_min_word(var, bound);
    }

  private:
    bool map(Word x, Word& out) const {
        Word scaled = 0;
        return multiply_word(scale, x, scaled) && add_word(scaled, offset, out);
    }
};

} // namespace constrint::engine

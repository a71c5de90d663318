// The propagation store's search points (Store::stamp, on_branch).
#include "engine/store.hpp"

#include <doctest/doctest.h>

using namespace constrint;
using namespace constrint::engine;

TEST_CASE("store stamps: on the branch at the node and below it, off it after backtracking past it") {
    Store store;
    const Store::Stamp root = store.stamp();
    CHECK(store.on_branch(root));
    CHECK_FALSE(store.on_branch(Store::Stamp{}));  // the default stamp is never on the branch

    store.push_level();
    const Store::Stamp left = store.stamp();
    store.push_level();
    const Store::Stamp left_left = store.stamp();
    CHECK(store.on_branch(root));
    CHECK(store.on_branch(left));
    CHECK(store.on_branch(left_left));

    store.pop_level();  // back at `left`
    CHECK(store.on_branch(left));
    CHECK_FALSE(store.on_branch(left_left));
    store.push_level();  // a sibling of left_left, at the same depth
    CHECK_FALSE(store.on_branch(left_left));
    CHECK(store.on_branch(left));

    store.pop_level();
    store.pop_level();  // back at the root
    store.push_level();  // a sibling of left
    CHECK_FALSE(store.on_branch(left));
    CHECK(store.on_branch(root));
}

"""model.type_names: the one type-name key and its variants."""

from __future__ import annotations

import pytest

from cachefit.model.type_names import (
    clang_type_words,
    key_matches,
    loose_type_key,
    type_key,
    unqualified_type_key,
    without_kind_keywords,
)


@pytest.mark.parametrize("spelled, key", [
    ("struct item", "item"),
    ("item", "item"),
    (" class  item ", "item"),
    ("ring<int, 16>", "ring<int,16>"),
    ("::ns::tcb", "ns::tcb"),
    ("struct ns::node_base<struct ns::list_node>", "ns::node_base<ns::list_node>"),
    ("pair<class a, union b>", "pair<a,b>"),
    ("structure", "structure"),
    ("const tcb", "consttcb"),
])
def test_type_key(spelled: str, key: str) -> None:
    assert type_key(spelled) == key


def test_unqualified_type_key_drops_leading_cv() -> None:
    assert unqualified_type_key("const volatile ns::tcb") == "ns::tcb"
    assert unqualified_type_key("const struct tcb") == "tcb"
    assert unqualified_type_key("W<const int>") == "W<constint>"
    assert unqualified_type_key("constant") == "constant"


def test_without_kind_keywords_keeps_the_spacing() -> None:
    assert without_kind_keywords("struct ns::node_base<struct ns::list_node>") == \
        "ns::node_base<ns::list_node>"
    assert without_kind_keywords("struct pair<int, class b>") == "pair<int, b>"
    assert without_kind_keywords("ring<int, 16>") == "ring<int, 16>"


def test_loose_type_key_reads_gccs_spellings_as_clangs() -> None:
    assert clang_type_words("ring<long unsigned int, 4>") == "ring<unsigned long, 4>"
    assert loose_type_key("ring<long unsigned int, 16u>") == \
        loose_type_key("ring<unsigned long,16>")
    assert loose_type_key("box<unsigned int>") == loose_type_key("box<unsigned>")
    assert type_key("box<unsigned int>") != type_key("box<unsigned>")


def test_key_matches_a_trailing_scope() -> None:
    assert key_matches("ns::tcb", "tcb")
    assert key_matches("ns::tcb", "struct ns::tcb")
    assert not key_matches("ns::xtcb", "tcb")
    assert key_matches("ring<long unsigned int, 4>", "ring<unsigned long,4>", loose_type_key)

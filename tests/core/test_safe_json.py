"""bridge.safe_json: the depth is measured without parsing, the iterative parser and writer agree
with the json module on every document, and deep documents never raise RecursionError."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import raises_exactly

from bridge import safe_json
from bridge.errors import ContractError
from bridge.safe_files import Limits

DOCS = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**80), 2**80),
        st.floats(allow_nan=False),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
        | st.sampled_from(['"', "\\", "[", "]", "{", "}", '\\"[', "\n"]),
    ),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=30,
)


def _depth(tree) -> int:
    if isinstance(tree, dict):
        return 1 + max(map(_depth, tree.values()), default=0)
    if isinstance(tree, list):
        return 1 + max(map(_depth, tree), default=0)
    return 0


@given(DOCS, st.sampled_from([None, 1]))
@settings(max_examples=300, deadline=None)
def test_the_iterative_parser_and_writer_agree_with_json(doc, indent):
    text = json.dumps(doc, indent=indent)
    assert safe_json.depth_of_text(text) == _depth(doc) == safe_json.depth_of(doc)
    assert safe_json._Parser(text).parse() == json.loads(text)
    assert json.loads(safe_json._dumps_deep(doc)) == doc


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[",
        "[1,]",
        '{"a":1,}',
        '{"a" 1}',
        "[1 2]",
        "[1] x",
        "{1: 2}",
        "[01]",
        "nul",
        '["\x01"]',
        "[-]",
        '{"a":}',
        "]",
        "[}",
        "{]",
    ],
)
def test_the_iterative_parser_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        safe_json._Parser(text).parse()


def test_non_finite_floats_parse_as_json_writes_them():
    text = json.dumps([math.nan, math.inf, -math.inf])
    parsed = safe_json._Parser(text).parse()
    assert math.isnan(parsed[0]) and parsed[1:] == [math.inf, -math.inf]


def test_deep_documents_parse_and_write_without_recursion():
    text = "[" * 5000 + "1" + "]" * 5000
    assert safe_json.depth_of_text(text) == 5000
    tree = safe_json.parse_json(text, subject="deep", fix="Fix it", limits=Limits(max_json_depth=5000))
    for _ in range(5000):
        tree = tree[0]
    assert tree == 1
    nested: list = [1]
    for _ in range(5000):
        nested = [nested]
    assert safe_json.dumps(nested, safe_json.depth_of(nested)) == "[" * 5001 + "1" + "]" * 5001


def test_brackets_inside_strings_do_not_count():
    assert safe_json.depth_of_text(json.dumps(["[[[[", {"a": "]]]}"}, '\\"[['])) == 2
    assert safe_json.depth_of_text('"unclosed [[[[') == 0


def test_past_the_limits_is_one_house_error():
    with raises_exactly(ContractError, "doc must nest at most 3 levels (Limits.max_json_depth), got 4 levels. Fix it."):
        safe_json.parse_json("[[[[]]]]", subject="doc", fix="Fix it", limits=Limits(max_json_depth=3))
    with raises_exactly(
        ContractError, "doc must be at most 4 characters of JSON (Limits.max_json_bytes), got 5 characters. Fix it."
    ):
        safe_json.parse_json("[1, ]", subject="doc", fix="Fix it", limits=Limits(max_json_bytes=4))
    with raises_exactly(ContractError, "doc must be JSON text, got '[1, ]'. Fix it."):
        safe_json.parse_json("[1, ]", subject="doc", fix="Fix it")


def test_a_text_that_expands_past_its_limits_is_refused():
    dicts = "[" + "{}," * 1_100_000 + "{}]"  # 3.3 MB of text, about 100 MB once parsed
    with raises_exactly(
        ContractError,
        "doc must open at most 1,048,576 lists and dicts (Limits.max_json_containers), got 1,100,002. Fix it.",
    ):
        safe_json.parse_json(dicts, subject="doc", fix="Fix it")
    zeros = "[" + "0," * 9_000_000 + "0]"
    with raises_exactly(
        ContractError, "doc must hold at most 8,388,608 values (Limits.max_json_values), got 9,000,002. Fix it."
    ):
        safe_json.parse_json(zeros, subject="doc", fix="Fix it")
    small = Limits(max_json_containers=3, max_json_values=10)
    assert safe_json.parse_json('["{{{{,,,,,,,,,,"]', subject="doc", fix="Fix it", limits=small) == ["{{{{,,,,,,,,,,"]
    with raises_exactly(ContractError, "doc must hold at most 10 values (Limits.max_json_values), got 11. Fix it."):
        safe_json.parse_json("[" + "1," * 9 + "1]", subject="doc", fix="Fix it", limits=small)


@settings(max_examples=150, deadline=None)
@given(tree=DOCS, limit=st.integers(0, 200))
def test_preview_is_repr_cut_short(tree, limit):
    tuples = json.loads(
        json.dumps(tree), object_hook=lambda d: {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}
    )
    for value in (tree, tuples):
        assert safe_json.preview(value, limit) == repr(value)[:limit]
        assert safe_json.short_json(value, limit) == json.dumps(value, default=repr)[:limit]


def test_preview_of_a_tree_too_deep_for_repr_needs_no_recursion():
    nested: list = [1]
    for _ in range(100_000):
        nested = [{"k": nested}]
    with pytest.raises(RecursionError):
        repr(nested)
    assert safe_json.preview(nested) == ("[{'k': " * 9)[:60]
    assert safe_json.short_json(nested) == ('[{"k": ' * 12)[:80]

"""Codec shapes the generated model never produces, reached through user classes.

An ``Extension``'s params and result classes are the user's own attrs classes
(``metadata["wire"]`` per field, an ``extra`` field), and ``structure`` takes
any type: these tests cover the annotations only such classes or calls bring:
a union of a class and an array of plain values, a union of a scalar and an
array of classes, a union with a single class, ``source_of`` on a class not
compiled yet (and on types that are not classes), and the annotations the
codec refuses (``set``, two array types in one union, a union of a scalar and
a mapping), which raise ``TypeError`` on every use, not only the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

import mcp_proto
from mcp_proto import DecodeError, structure, types, unstructure


@attrs.frozen(kw_only=True)
class Item:
    name: str = attrs.field(metadata={"wire": "name"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ItemOrInts:
    value: Item | Sequence[int] | None = attrs.field(default=None, metadata={"wire": "value"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ItemOrMaps:
    value: Item | Sequence[dict[str, int]] | None = attrs.field(
        default=None, metadata={"wire": "value"}
    )
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CountOrItems:
    value: int | Sequence[Item] | None = attrs.field(default=None, metadata={"wire": "value"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class WithSet:
    tags: set[str] | None = attrs.field(default=None, metadata={"wire": "tags"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ItemOrSet:
    value: Item | set[int] | None = attrs.field(default=None, metadata={"wire": "value"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class HoldsItemOrSet:
    inner: ItemOrSet | None = attrs.field(default=None, metadata={"wire": "inner"})
    extra: Any = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class SizedItem:
    name: str = attrs.field(metadata={"wire": "name"})
    size: int = attrs.field(metadata={"wire": "size"})
    extra: Any = attrs.field(factory=dict)


def test_untagged_union_picks_the_class_leaving_fewest_unknown_keys_in_any_order() -> None:
    """With no tag field, every class is tried: an exact fit wins at once, else the one whose
    ``extra`` is smallest (the first of equals), whatever the order of the union."""
    wire = {"name": "n", "size": 1, "colour": "red"}
    best = SizedItem(name="n", size=1, extra={"colour": "red"})
    assert structure(wire, SizedItem | Item) == best
    assert structure(wire, Item | SizedItem) == best
    many = {"name": "n", "size": 1, "a": 1, "b": 2}  # 2 unknown keys against 3
    assert type(structure(many, Item | SizedItem)) is SizedItem
    assert structure({"name": "n"}, SizedItem | Item) == Item(name="n")


def test_source_of_compiles_a_class_on_first_use() -> None:
    @attrs.frozen(kw_only=True)
    class Fresh:  # used nowhere else: source_of is the first to compile it
        body: str = attrs.field(metadata={"wire": "bodyText"})
        extra: Any = attrs.field(factory=dict)

    src = mcp_proto.source_of(Fresh)
    assert "def structure(d):" in src and "def unstructure(o):" in src
    assert "'bodyText'" in src
    assert unstructure(Fresh(body="b")) == {"bodyText": "b"}
    assert structure({"bodyText": "b"}, Fresh) == Fresh(body="b")


@pytest.mark.parametrize("tp", [int, list[int], dict[str, int], Item | int])
def test_source_of_refuses_what_is_not_a_class(tp: Any) -> None:
    with pytest.raises(TypeError, match="is not a model class"):
        mcp_proto.source_of(tp)


def test_class_or_array_of_scalars() -> None:
    as_tuple = unstructure(ItemOrInts(value=(1, 2)))
    assert as_tuple == {"value": [1, 2]} and type(as_tuple["value"]) is list
    ints = [3, 4]
    assert unstructure(ItemOrInts(value=ints))["value"] is ints  # already JSON: shared
    assert unstructure(ItemOrInts(value=Item(name="n"))) == {"value": {"name": "n"}}
    assert structure({"value": [1, 2]}, ItemOrInts) == ItemOrInts(value=[1, 2])
    assert structure({"value": {"name": "n"}}, ItemOrInts) == ItemOrInts(value=Item(name="n"))
    err = _bad({"value": [1, "x"]}, ItemOrInts)
    assert err.path == "/value/1" and "expected an integer, got a string" in str(err)
    err = _bad({"value": "x"}, ItemOrInts)
    assert err.path == "/value" and "expected an object or an array, got a string" in str(err)


def test_class_or_array_of_plain_mappings() -> None:
    out = unstructure(ItemOrMaps(value=({"a": 1}, {"b": 2})))
    assert out == {"value": [{"a": 1}, {"b": 2}]} and type(out["value"]) is list
    assert unstructure(ItemOrMaps(value=Item(name="m"))) == {"value": {"name": "m"}}
    assert structure({"value": [{"a": 1}]}, ItemOrMaps) == ItemOrMaps(value=[{"a": 1}])
    assert _bad({"value": [{"a": "x"}]}, ItemOrMaps).path == "/value/0/a"


def test_scalar_or_array_of_classes() -> None:
    assert unstructure(CountOrItems(value=3)) == {"value": 3}
    assert unstructure(CountOrItems(value=(Item(name="a"), Item(name="b")))) == {
        "value": [{"name": "a"}, {"name": "b"}]
    }
    got: CountOrItems = structure({"value": [{"name": "a"}]}, CountOrItems)
    assert got == CountOrItems(value=[Item(name="a")])
    assert structure({"value": 3}, CountOrItems) == CountOrItems(value=3)
    assert _bad({"value": [{"name": 1}]}, CountOrItems).path == "/value/0/name"


def test_union_with_one_class_uses_that_class() -> None:
    tp = types.TextContent | int
    assert structure({"type": "text", "text": "x"}, tp) == types.TextContent(text="x")
    assert structure(5, tp) == 5
    err = _bad({"type": "text", "text": 1}, tp)
    # The class's own error, not a best-fit summary ("does not match any of ...").
    assert err.path == "/text" and str(err).endswith("expected a string, got an integer")
    err = _bad([1], tp)
    assert err.path == "" and str(err).endswith("expected an object or a scalar, got an array")
    assert _bad("s", tp).path == ""


def test_two_array_types_in_a_union_are_refused() -> None:
    with pytest.raises(TypeError, match=r"^no structurer for list\[int\] \| list\[str\]$"):
        structure([1], list[int] | list[str])


def test_union_of_scalars_and_mappings_is_refused() -> None:
    # Not a RecursionError: the scalar part of the union is the union itself.
    with pytest.raises(TypeError, match=r"^no structurer for int \| dict\[str, int\]$"):
        structure(1, int | dict[str, int])


def test_unsupported_field_is_refused_on_every_use() -> None:
    for _ in range(2):
        with pytest.raises(TypeError, match=r"^no unstructurer for set\[str\]$"):
            structure({"tags": ["a"]}, WithSet)
    with pytest.raises(TypeError, match=r"^no unstructurer for set\[str\]$"):
        unstructure(WithSet(tags={"a"}))
    with pytest.raises(TypeError):
        mcp_proto.source_of(WithSet)


def test_a_class_refused_while_binding_is_not_left_half_compiled() -> None:
    # The set is found only when the union's structurer is built, after registration.
    for tp in (ItemOrSet, HoldsItemOrSet, ItemOrSet):
        with pytest.raises(TypeError, match=r"^no structurer for set\[int\]$"):
            structure({"value": {"name": "n"}, "inner": {"value": [1]}}, tp)
        with pytest.raises(TypeError, match=r"^no structurer for set\[int\]$"):
            structure({}, tp)
    # The valid member compiled on the way still works.
    assert structure({"name": "n"}, Item) == Item(name="n")


def _bad(obj: Any, tp: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        structure(obj, tp)
    assert info.value.code == mcp_proto.INVALID_PARAMS
    return info.value

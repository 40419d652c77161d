"""The compiled keywords: assertions by JSON type, and the applicators.

Messages say what is wrong with the value, in words fit for a tool-error text; the failing
keyword and the JSON pointers travel beside them in the ``Failure``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from ._errors import Failure
from ._nodes import Ann, Check, Ctx, Node, Path
from ._regex import Regex
from ._values import FAST_TYPES, canon, json_type, pointer

Errs = list[Failure] | None


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- any type ---------------------------------------------------------------------------------


class TypeCheck(Check):
    __slots__ = ("fast", "names")

    def __init__(self, kw: str, loc: str, names: Sequence[str]):
        super().__init__(kw, loc)
        self.names = tuple(names)
        self.fast = frozenset(names) | ({"integer"} if "number" in names else set())

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        kind = FAST_TYPES.get(type(inst)) or json_type(inst)
        if kind in self.fast:
            return True
        if kind == "number" and "integer" in self.fast and float(inst).is_integer():
            return True  # 1.0 is an integer in JSON Schema 2020-12
        want = " or ".join(self.names)
        return self.fail(errs, path, f"expected {want}, got {kind}")


class Enum(Check):
    __slots__ = ("keys", "values")

    def __init__(self, kw: str, loc: str, values: Sequence[Any]):
        super().__init__(kw, loc)
        self.values = list(values)
        self.keys = frozenset(canon(v) for v in values)

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        if canon(inst) in self.keys:
            return True
        if self.kw == "const":
            return self.fail(errs, path, f"must be {_show(self.values[0])}")
        shown = ", ".join(_show(v, 30) for v in self.values[:10])
        more = ", ..." if len(self.values) > 10 else ""
        return self.fail(errs, path, f"must be one of [{shown}{more}], got {_show(inst)}")


class FalseSchema(Check):
    __slots__ = ()

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        return self.fail(errs, path, "no value is allowed here (the schema is false)")


class AllOf(Check):
    __slots__ = ("subs",)

    def __init__(self, kw: str, loc: str, subs: Sequence[Node]):
        super().__init__(kw, loc)
        self.subs = tuple(subs)

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ok = True
        for sub in self.subs:
            if not sub.check(inst, path, ctx, errs):
                ok = False
                if errs is None:
                    return False
        return ok

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        for sub in self.subs:
            sub.annotate(inst, path, ctx, acc)

    def children(self) -> Iterator[tuple[Node, bool]]:
        return ((s, True) for s in self.subs)


class AnyOf(AllOf):
    __slots__ = ()

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        for sub in self.subs:
            if sub.check(inst, path, ctx, None):
                return True
        return self.fail(errs, path, f"matches none of the {len(self.subs)} schemas of anyOf")

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        for sub in self.subs:
            if sub.check(inst, path, ctx, None):
                sub.annotate(inst, path, ctx, acc)


class OneOf(AnyOf):
    __slots__ = ()

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        matched = [i for i, sub in enumerate(self.subs) if sub.check(inst, path, ctx, None)]
        if len(matched) == 1:
            return True
        if not matched:
            return self.fail(errs, path, f"matches none of the {len(self.subs)} schemas of oneOf")
        return self.fail(errs, path, f"matches more than one schema of oneOf ({matched})")


class Not(Check):
    __slots__ = ("sub",)

    def __init__(self, kw: str, loc: str, sub: Node):
        super().__init__(kw, loc)
        self.sub = sub

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        if self.sub.check(inst, path, ctx, None):
            return self.fail(errs, path, "must not match the schema under not")
        return True

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.sub, True


class IfThenElse(Check):
    __slots__ = ("else_", "if_", "then")

    def __init__(self, kw: str, loc: str, if_: Node, then: Node | None, else_: Node | None):
        super().__init__(kw, loc)
        self.if_, self.then, self.else_ = if_, then, else_

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        branch = self.then if self.if_.check(inst, path, ctx, None) else self.else_
        return branch is None or branch.check(inst, path, ctx, errs)

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        if self.if_.check(inst, path, ctx, None):
            self.if_.annotate(inst, path, ctx, acc)
            branch = self.then
        else:
            branch = self.else_
        if branch is not None:
            branch.annotate(inst, path, ctx, acc)

    def children(self) -> Iterator[tuple[Node, bool]]:
        for node in (self.if_, self.then, self.else_):
            if node is not None:
                yield node, True


class Ref(Check):
    """``$ref``; the target is filled in once every reference is compiled."""

    __slots__ = ("target",)

    def __init__(self, kw: str, loc: str):
        super().__init__(kw, loc)
        self.target = Node(loc)

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        return self.target.check(inst, path, ctx, errs)

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        self.target.annotate(inst, path, ctx, acc)

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.target, True


# -- numbers ----------------------------------------------------------------------------------


class Bound(Check):
    """``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``."""

    __slots__ = ("limit", "test", "words")
    KIND = "number"
    _TESTS: Mapping[str, tuple[Callable[[Any, Any], bool], str]] = {
        "minimum": (lambda v, b: v >= b, "at least"),
        "maximum": (lambda v, b: v <= b, "at most"),
        "exclusiveMinimum": (lambda v, b: v > b, "greater than"),
        "exclusiveMaximum": (lambda v, b: v < b, "less than"),
    }

    def __init__(self, kw: str, loc: str, limit: float):
        super().__init__(kw, loc)
        self.limit = limit
        self.test, self.words = self._TESTS[kw]

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        if self.test(inst, self.limit):
            return True
        return self.fail(errs, path, f"must be {self.words} {self.limit}, got {inst}")


class MultipleOf(Check):
    __slots__ = ("factor",)
    KIND = "number"

    def __init__(self, kw: str, loc: str, factor: float):
        super().__init__(kw, loc)
        self.factor = factor

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        factor = self.factor
        if type(inst) is int and type(factor) is int:
            ok = inst % factor == 0
        else:
            try:
                ok = Decimal(repr(inst)) % Decimal(repr(factor)) == 0
            except InvalidOperation:
                quotient = inst / factor
                ok = math.isfinite(quotient) and quotient.is_integer()
        return ok or self.fail(errs, path, f"must be a multiple of {factor}, got {inst}")


# -- strings ----------------------------------------------------------------------------------


class Length(Check):
    """``minLength``/``maxLength`` (code points), ``minItems``/``maxItems``,
    ``minProperties``/``maxProperties``."""

    __slots__ = ("at_least", "limit", "noun")
    _KIND: ClassVar[dict[str, str]] = {
        "minLength": "string",
        "maxLength": "string",
        "minItems": "array",
        "maxItems": "array",
        "minProperties": "object",
        "maxProperties": "object",
    }
    _NOUN: ClassVar[dict[str, str]] = {
        "string": "characters",
        "array": "items",
        "object": "properties",
    }

    def __init__(self, kw: str, loc: str, limit: int):
        super().__init__(kw, loc)
        self.limit = limit
        self.at_least = kw.startswith("min")
        self.kind = self._KIND[kw]
        self.noun = self._NOUN[self.kind]

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        size = len(inst)
        if (size >= self.limit) if self.at_least else (size <= self.limit):
            return True
        words = "at least" if self.at_least else "at most"
        noun = self.noun if self.limit != 1 else self.noun.replace("ies", "y").rstrip("s")
        return self.fail(errs, path, f"must have {words} {self.limit} {noun}, has {size}")


class Pattern(Check):
    __slots__ = ("regex",)
    KIND = "string"

    def __init__(self, kw: str, loc: str, regex: Regex):
        super().__init__(kw, loc)
        self.regex = regex

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ctx.charge(len(inst) // 100)
        if self.regex.search(inst, _where(path)):
            return True
        return self.fail(errs, path, f"does not match the pattern {self.regex.regex.pattern!r}")


class Format(Check):
    __slots__ = ("name", "test")
    KIND = "string"

    def __init__(self, kw: str, loc: str, name: str, test: Callable[[str], bool]):
        super().__init__(kw, loc)
        self.name, self.test = name, test

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        return self.test(inst) or self.fail(errs, path, f"is not a valid {self.name}")


def _where(path: Path) -> str:
    return pointer(path)


# -- arrays -----------------------------------------------------------------------------------


class Items(Check):
    """``prefixItems`` + ``items`` (2020-12), or array ``items`` + ``additionalItems``."""

    __slots__ = ("prefix", "rest")
    KIND = "array"

    def __init__(self, kw: str, loc: str, prefix: Sequence[Node], rest: Node | None):
        super().__init__(kw, loc)
        self.prefix = tuple(prefix)
        self.rest = rest

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ok = True
        prefix, rest = self.prefix, self.rest
        for i, item in enumerate(inst):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is None:
                break
            if not sub.check(item, (path, i), ctx, errs):
                ok = False
                if errs is None:
                    return False
        return ok

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        if self.rest is not None:
            acc.all_items = True
        else:
            acc.items.update(range(min(len(self.prefix), len(inst))))

    def children(self) -> Iterator[tuple[Node, bool]]:
        for node in (*self.prefix, self.rest):
            if node is not None:
                yield node, False


class Contains(Check):
    __slots__ = ("least", "most", "sub")
    KIND = "array"

    def __init__(self, kw: str, loc: str, sub: Node, least: int, most: int | None):
        super().__init__(kw, loc)
        self.sub, self.least, self.most = sub, least, most

    def _matches(self, inst: Any, path: Path, ctx: Ctx) -> list[int]:
        return [i for i, item in enumerate(inst) if self.sub.check(item, (path, i), ctx, None)]

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        found = len(self._matches(inst, path, ctx))
        if found < self.least:
            return self.fail(
                errs, path, f"must contain at least {self.least} matching item(s), has {found}"
            )
        if self.most is not None and found > self.most:
            return self.fail(
                errs, path, f"must contain at most {self.most} matching item(s), has {found}"
            )
        return True

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        acc.items.update(self._matches(inst, path, ctx))

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.sub, False


class UniqueItems(Check):
    __slots__ = ()
    KIND = "array"

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ctx.charge(len(inst))
        seen: dict[Any, int] = {}
        for i, item in enumerate(inst):
            key = canon(item)
            if key in seen:
                return self.fail(errs, path, f"items {seen[key]} and {i} are equal")
            seen[key] = i
        return True


class Unevaluated(Check):
    """``unevaluatedItems``/``unevaluatedProperties``: what the siblings did not evaluate."""

    __slots__ = ("parent", "sub")

    def __init__(self, kw: str, loc: str, sub: Node, parent: Node):
        super().__init__(kw, loc)
        self.sub, self.parent = sub, parent
        self.kind = "array" if kw == "unevaluatedItems" else "object"

    def _rest(self, inst: Any, path: Path, ctx: Ctx) -> list[Any]:
        acc = Ann()
        self.parent.annotate(inst, path, ctx, acc, skip=self)
        if self.kw == "unevaluatedItems":
            return [] if acc.all_items else [i for i in range(len(inst)) if i not in acc.items]
        return [k for k in inst if k not in acc.props]

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ok = True
        for key in self._rest(inst, path, ctx):
            if not self.sub.check(inst[key], (path, key), ctx, None):
                ok = False
                what = "item" if self.kw == "unevaluatedItems" else "property"
                self.fail(errs, (path, key), f"unevaluated {what} {key!r} is not allowed here")
                if errs is None:
                    return False
        return ok

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        if self.kw == "unevaluatedItems":
            acc.all_items = True
        else:
            acc.props.update(inst)

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.sub, False

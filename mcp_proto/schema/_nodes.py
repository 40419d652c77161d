"""The compiled form of a schema: a ``Node`` per subschema, holding one check per keyword.

A check's ``check(instance, path, ctx, errs)`` returns whether the instance passes. With
``errs`` a list it appends a ``Failure`` for each problem and goes on; with ``errs`` ``None``
it stops at the first problem and builds no message (the fast path, also used inside
``anyOf``/``oneOf``/``not``/``if``). ``path`` is the instance location as a linked tuple
``(parent, token)``, turned into a JSON pointer only when a failure is recorded.

``annotate`` adds what a keyword evaluated (property names, item indexes) to an ``Ann``, for
``unevaluatedProperties``/``unevaluatedItems``; it is only ever called when the schema uses
them. Every node visit costs one step of the budget (``Ctx``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._errors import Failure, LimitExceeded
from ._values import json_type, pointer

__all__ = ["Ann", "Check", "Ctx", "Node"]

Path = tuple[Any, ...]


class Ctx:
    """The mutable state of one validation: steps spent, evaluation depth, dynamic scope."""

    __slots__ = ("depth", "max_depth", "max_steps", "scope", "steps")

    def __init__(self, max_steps: int, max_depth: int):
        self.scope: list[str] = []  # the dynamic scope (see _dynamic)
        self.steps = 0
        self.max_steps = max_steps
        self.depth = 0
        self.max_depth = max_depth

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.max_steps:
            raise LimitExceeded("max_steps", self.max_steps, "the validation's step count")


class Ann:
    """Annotations gathered for ``unevaluated*``: property names and item indexes evaluated."""

    __slots__ = ("all_items", "items", "props")

    def __init__(self) -> None:
        self.props: set[str] = set()
        self.items: set[int] = set()
        self.all_items = False


class Check:
    """One compiled keyword. ``kind`` is the JSON type it applies to (``None``: every type)."""

    __slots__ = ("kind", "kw", "loc")
    KIND: str | None = None

    def __init__(self, kw: str, loc: str):
        self.kw = kw
        self.loc = loc
        self.kind = self.KIND

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: list[Failure] | None) -> bool:
        raise NotImplementedError

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        """Add what this keyword evaluated; most keywords evaluate nothing."""

    def children(self) -> Iterator[tuple[Node, bool]]:
        """The subschema nodes and whether each applies to the same instance (in place)."""
        return iter(())

    def fail(self, errs: list[Failure] | None, path: Path, message: str) -> bool:
        if errs is not None:
            errs.append(
                Failure(
                    instance_path=pointer(path),
                    keyword=self.kw,
                    schema_path=self.loc,
                    message=message,
                )
            )
        return False


_KINDS = {str: "string", dict: "object", int: "number", float: "number", list: "array"}


class Node:
    """A compiled subschema: the checks for any type, and those for each JSON type."""

    __slots__ = ("by_kind", "checks", "every", "loc")

    def __init__(self, loc: str):
        self.loc = loc
        self.checks: list[Check] = []
        self.every: tuple[Check, ...] = ()
        self.by_kind: dict[str, tuple[Check, ...]] = {}

    def seal(self) -> None:
        """Sort the checks by the JSON type they apply to (after compilation)."""
        self.every = tuple(c for c in self.checks if c.kind is None)
        kinds = {c.kind for c in self.checks if c.kind is not None}
        self.by_kind = {k: tuple(c for c in self.checks if c.kind == k) for k in kinds if k}

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: list[Failure] | None) -> bool:
        ctx.steps += 1
        if ctx.steps > ctx.max_steps:
            ctx.charge(0)
        ctx.depth += 1
        if ctx.depth > ctx.max_depth:
            raise LimitExceeded("max_eval_depth", ctx.max_depth, "the nesting of evaluations")
        ok = True
        for c in self.every:
            if not c.check(inst, path, ctx, errs):
                ok = False
                if errs is None:
                    ctx.depth -= 1
                    return False
        if self.by_kind:
            for c in self.by_kind.get(_KINDS.get(type(inst)) or kind_of(inst), ()):
                if not c.check(inst, path, ctx, errs):
                    ok = False
                    if errs is None:
                        break
        ctx.depth -= 1
        return ok

    def annotate(
        self, inst: Any, path: Path, ctx: Ctx, acc: Ann, skip: Check | None = None
    ) -> None:
        """Add what the checks that apply to ``inst``'s type evaluated (all but ``skip``)."""
        kind = kind_of(inst)
        for c in self.checks:
            if c is not skip and (c.kind is None or c.kind == kind):
                c.annotate(inst, path, ctx, acc)


def kind_of(inst: Any) -> str:
    """The JSON type a check applies to: ``number`` for integers too."""
    kind = _KINDS.get(type(inst))
    if kind is None:
        kind = json_type(inst)
        kind = "number" if kind == "integer" else kind
    return kind

"""``$dynamicRef`` (2020-12) and ``$recursiveRef`` (2019-09): references resolved at run time.

A dynamic reference first resolves like ``$ref``. When its target declares the matching
dynamic anchor (``$dynamicAnchor`` with the reference's fragment as its name, or
``$recursiveAnchor: true`` for ``$recursiveRef: "#"``), the reference goes instead to the
outermost schema resource of the *dynamic scope* that declares that anchor. The dynamic scope is
the stack of resources (``$id`` roots, the document root) evaluation has entered.

Tracking the scope costs a comparison per subschema, so only documents that use a dynamic
reference pay it: their nodes are ``ScopedNode``s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._keywords import Errs
from ._nodes import Ann, Check, Ctx, Node, Path

__all__ = ["DynamicRef", "ScopedNode"]


class ScopedNode(Node):
    """A node that pushes its resource's URI onto the dynamic scope while it is evaluated."""

    __slots__ = ("base",)

    def __init__(self, loc: str, base: str):
        super().__init__(loc)
        self.base = base

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        scope = ctx.scope
        if scope and scope[-1] == self.base:
            return Node.check(self, inst, path, ctx, errs)
        scope.append(self.base)
        ok = Node.check(self, inst, path, ctx, errs)
        scope.pop()
        return ok

    def annotate(
        self, inst: Any, path: Path, ctx: Ctx, acc: Ann, skip: Check | None = None
    ) -> None:
        scope = ctx.scope
        pushed = not scope or scope[-1] != self.base
        if pushed:
            scope.append(self.base)
        Node.annotate(self, inst, path, ctx, acc, skip)
        if pushed:
            scope.pop()


class DynamicRef(Check):
    """``$dynamicRef``/``$recursiveRef``: ``target`` statically, or the outermost candidate.

    ``candidates`` maps a resource URI to its subschema declaring the anchor; it is empty when
    the static target does not declare the anchor (the reference is then a plain ``$ref``).
    """

    __slots__ = ("candidates", "target")

    def __init__(self, kw: str, loc: str):
        super().__init__(kw, loc)
        self.target = Node(loc)
        self.candidates: dict[str, Node] = {}

    def _pick(self, ctx: Ctx) -> Node:
        if self.candidates:
            for uri in ctx.scope:
                node = self.candidates.get(uri)
                if node is not None:
                    return node
        return self.target

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        return self._pick(ctx).check(inst, path, ctx, errs)

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        self._pick(ctx).annotate(inst, path, ctx, acc)

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.target, True
        for node in self.candidates.values():
            yield node, True

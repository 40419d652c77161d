"""The compiled object keywords."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ._errors import Failure
from ._keywords import Errs
from ._nodes import Ann, Check, Ctx, Node, Path
from ._regex import Regex
from ._values import pointer


class Properties(Check):
    """``properties``, ``patternProperties`` and ``additionalProperties`` together (the last
    depends on the other two). ``kw`` is the first of them present; failures of
    ``additionalProperties: false`` name that keyword."""

    __slots__ = ("additional", "additional_loc", "false_additional", "patterns", "props")
    KIND = "object"

    def __init__(
        self,
        kw: str,
        loc: str,
        *,
        props: Mapping[str, Node],
        patterns: Sequence[tuple[Regex, Node]],
        additional: Node | None,
        additional_loc: str,
        false_additional: bool,
    ):
        super().__init__(kw, loc)
        self.props = dict(props)
        self.patterns = tuple(patterns)
        self.additional = additional
        self.additional_loc = additional_loc
        self.false_additional = false_additional

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ok = True
        props, patterns, additional = self.props, self.patterns, self.additional
        for key, value in inst.items():
            sub = props.get(key)
            matched = False
            if sub is not None:
                matched = True
                if not sub.check(value, (path, key), ctx, errs):
                    ok = False
                    if errs is None:
                        return False
            for regex, node in patterns:
                if regex.search(key, pointer((path, key))):
                    matched = True
                    if not node.check(value, (path, key), ctx, errs):
                        ok = False
                        if errs is None:
                            return False
            if matched or additional is None:
                continue
            if self.false_additional:
                ok = False
                if errs is None:
                    return False
                self._extra(errs, path, key)
            elif not additional.check(value, (path, key), ctx, errs):
                ok = False
                if errs is None:
                    return False
        return ok

    def _extra(self, errs: list[Failure], path: Path, key: str) -> None:
        errs.append(
            Failure(
                instance_path=pointer((path, key)),
                keyword="additionalProperties",
                schema_path=self.additional_loc,
                message=f"unexpected property {key!r}",
            )
        )

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        if self.additional is not None:
            acc.props.update(inst)
            return
        for key in inst:
            if key in self.props or any(r.search(key, "") for r, _ in self.patterns):
                acc.props.add(key)

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield from ((n, False) for n in self.props.values())
        yield from ((n, False) for _, n in self.patterns)
        if self.additional is not None:
            yield self.additional, False


class Required(Check):
    __slots__ = ("names",)
    KIND = "object"

    def __init__(self, kw: str, loc: str, names: Sequence[str]):
        super().__init__(kw, loc)
        self.names = tuple(names)

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        missing = [n for n in self.names if n not in inst]
        if not missing:
            return True
        if len(missing) == 1:
            return self.fail(errs, path, f"missing required property {missing[0]!r}")
        return self.fail(errs, path, f"missing required properties {missing}")


class PropertyNames(Check):
    __slots__ = ("sub",)
    KIND = "object"

    def __init__(self, kw: str, loc: str, sub: Node):
        super().__init__(kw, loc)
        self.sub = sub

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        for key in inst:
            if not self.sub.check(key, path, ctx, None):
                return self.fail(errs, path, f"property name {key!r} is not allowed")
        return True

    def children(self) -> Iterator[tuple[Node, bool]]:
        yield self.sub, False


class Dependent(Check):
    """``dependentRequired``, ``dependentSchemas``, and draft-07 ``dependencies`` (both)."""

    __slots__ = ("names", "schemas")
    KIND = "object"

    def __init__(
        self, kw: str, loc: str, names: Mapping[str, Sequence[str]], schemas: Mapping[str, Node]
    ):
        super().__init__(kw, loc)
        self.names = dict(names)
        self.schemas = dict(schemas)

    def check(self, inst: Any, path: Path, ctx: Ctx, errs: Errs) -> bool:
        ok = True
        for key, needed in self.names.items():
            if key in inst:
                missing = [n for n in needed if n not in inst]
                if missing:
                    ok = self.fail(errs, path, f"property {key!r} requires {missing}")
                    if errs is None:
                        return False
        for key, sub in self.schemas.items():
            if key in inst and not sub.check(inst, path, ctx, errs):
                ok = False
                if errs is None:
                    return False
        return ok

    def annotate(self, inst: Any, path: Path, ctx: Ctx, acc: Ann) -> None:
        for key, sub in self.schemas.items():
            if key in inst:
                sub.annotate(inst, path, ctx, acc)

    def children(self) -> Iterator[tuple[Node, bool]]:
        return ((n, True) for n in self.schemas.values())

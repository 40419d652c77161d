"""Compilation: a schema document becomes a graph of ``Node``s, checked against its dialect.

The compiler is the schema's validity check (SCHEMA-05): each keyword it knows must have a
value of the right shape (``"minLength": -1`` or ``"required": "x"`` is an ``InvalidSchema``
naming the location and keyword). Unknown keywords are annotations and are ignored.

Order of work, each step bounded: the size walk (``max_schema_values``,
``max_schema_nesting``), the dialect, the document index, then the nodes: nested subschemas
by recursion (``max_schema_depth``), ``$ref`` targets from a work list (so a chain of
references never deepens the Python stack), each subschema compiled once
(``max_subschemas``). Last, a reference loop that never moves into the instance
(``{"$ref": "#"}``, ``allOf`` through ``$ref`` back to itself) is refused: it would recurse
forever on any value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urldefrag

from ._dialects import DRAFT_07, DRAFT_2020_12, Dialect, dialect_named
from ._dynamic import DynamicRef, ScopedNode
from ._errors import InvalidSchema, LimitExceeded, UnsupportedDialect
from ._formats import FORMATS
from ._keywords import (
    AllOf,
    AnyOf,
    Bound,
    Contains,
    Enum,
    FalseSchema,
    Format,
    IfThenElse,
    Items,
    Length,
    MultipleOf,
    Not,
    OneOf,
    Pattern,
    Ref,
    TypeCheck,
    Unevaluated,
    UniqueItems,
)
from ._limits import Limits, check_schema_size
from ._nodes import Node
from ._objects import Dependent, Properties, PropertyNames, Required
from ._refs import DEFAULT_BASE, Index, RemoteResolver, join
from ._regex import compile_pattern
from ._values import escape

__all__ = ["compile_document"]

_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})
_DYNAMIC = {"2020-12": "$dynamicRef", "2019-09": "$recursiveRef"}


def _get(schema: Any, key: str) -> Any:
    return schema.get(key) if isinstance(schema, Mapping) else None


def _dialect_of(schema: Any, default: Dialect) -> Dialect:
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return default
    uri = schema["$schema"]
    found = dialect_named(uri) if isinstance(uri, str) else None
    if found is None:
        raise UnsupportedDialect(uri)
    return found


class _Compiler:
    def __init__(
        self, limits: Limits, formats: bool, dialect: Dialect, resolver: RemoteResolver | None
    ):
        self.limits = limits
        self.formats = formats
        self.dialect = dialect
        self.index = Index(dialect, limits, resolver)
        self.memo: dict[tuple[int, str], Node] = {}
        self.pending: list[Callable[[], None]] = []
        self.count = 0
        self.dynamic = False  # whether nodes track the dynamic scope (set before compiling)

    def bad(self, loc: str, kw: str, reason: str) -> InvalidSchema:
        return InvalidSchema(reason, schema_path=f"{loc}/{escape(kw)}", keyword=kw)

    def node(self, schema: Any, base: str, loc: str, depth: int) -> Node:
        key = (id(schema), base)
        found = self.memo.get(key)
        if found is not None:
            return found
        if depth > self.limits.max_schema_depth:
            raise LimitExceeded(
                "max_schema_depth",
                self.limits.max_schema_depth,
                f"the subschema nesting at {loc or '/'}",
            )
        self.count += 1
        if self.count > self.limits.max_subschemas:
            raise LimitExceeded(
                "max_subschemas", self.limits.max_subschemas, "the number of subschemas"
            )
        if isinstance(schema, Mapping):
            base = self.index.base_of.get(id(schema), base)
        node = ScopedNode(loc, urldefrag(base)[0]) if self.dynamic else Node(loc)
        self.memo[key] = node
        if schema is False:
            node.checks.append(FalseSchema("false", loc))
        elif isinstance(schema, Mapping):
            self._keywords(node, schema, base, loc, depth)
        elif schema is not True:
            raise InvalidSchema(
                f"a schema must be an object or a boolean, got {type(schema).__name__}",
                schema_path=loc,
            )
        node.seal()
        return node

    def _sub(self, schema: Mapping[str, Any], kw: str, base: str, loc: str, depth: int) -> Node:
        return self.node(schema[kw], base, f"{loc}/{escape(kw)}", depth + 1)

    def _subs(
        self, schema: Mapping[str, Any], kw: str, base: str, loc: str, depth: int
    ) -> list[Node]:
        value = schema[kw]
        if not isinstance(value, list) or (not value and kw != "prefixItems"):
            raise self.bad(loc, kw, f"{kw} must be a non-empty array of schemas")
        here = f"{loc}/{kw}"
        return [self.node(s, base, f"{here}/{i}", depth + 1) for i, s in enumerate(value)]

    def _number(self, schema: Mapping[str, Any], kw: str, loc: str, whole: bool = False) -> Any:
        value = schema[kw]
        ok = type(value) in (int, float) and (not whole or float(value).is_integer())
        if not ok or (whole and value < 0):
            want = "a non-negative integer" if whole else "a number"
            raise self.bad(loc, kw, f"{kw} must be {want}, got {value!r}")
        return int(value) if whole else value

    def _keywords(
        self, node: Node, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> None:
        d = self.dialect
        add = node.checks.append
        if "$schema" in schema and depth > 0 and _dialect_of(schema, d) is not d:
            raise self.bad(loc, "$schema", "a subschema may not change the dialect")
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise self.bad(loc, "$ref", "$ref must be a string")
            check = Ref("$ref", f"{loc}/$ref")
            self.pending.append(lambda: self._resolve(check, ref, base))
            add(check)
            if d.ref_overrides:
                return
        dynamic_kw = _DYNAMIC.get(d.name)
        if dynamic_kw is not None and dynamic_kw in schema:
            ref = schema[dynamic_kw]
            if not isinstance(ref, str) or (dynamic_kw == "$recursiveRef" and ref != "#"):
                want = '"#"' if dynamic_kw == "$recursiveRef" else "a string"
                raise self.bad(loc, dynamic_kw, f"{dynamic_kw} must be {want}")
            dyn = DynamicRef(dynamic_kw, f"{loc}/{escape(dynamic_kw)}")
            self.pending.append(lambda: self._resolve_dynamic(dyn, ref, base))
            add(dyn)
        if "type" in schema:
            names = schema["type"]
            names = [names] if isinstance(names, str) else names
            if (
                not isinstance(names, list)
                or not names
                or len(set(names)) != len(names)
                or not all(isinstance(n, str) and n in _TYPES for n in names)
            ):
                raise self.bad(
                    loc,
                    "type",
                    f"type must be a type name or a list of distinct "
                    f"type names, got {schema['type']!r}",
                )
            add(TypeCheck("type", f"{loc}/type", names))
        if "enum" in schema:
            if not isinstance(schema["enum"], list):
                raise self.bad(loc, "enum", "enum must be an array")
            add(Enum("enum", f"{loc}/enum", schema["enum"]))
        if "const" in schema:
            add(Enum("const", f"{loc}/const", [schema["const"]]))
        for kw, cls in (("allOf", AllOf), ("anyOf", AnyOf), ("oneOf", OneOf)):
            if kw in schema:
                add(cls(kw, f"{loc}/{kw}", self._subs(schema, kw, base, loc, depth)))
        if "not" in schema:
            add(Not("not", f"{loc}/not", self._sub(schema, "not", base, loc, depth)))
        if "if" in schema:
            then = self._sub(schema, "then", base, loc, depth) if "then" in schema else None
            else_ = self._sub(schema, "else", base, loc, depth) if "else" in schema else None
            add(
                IfThenElse(
                    "if", f"{loc}/if", self._sub(schema, "if", base, loc, depth), then, else_
                )
            )
        self._numbers(node, schema, loc)
        self._strings(node, schema, loc)
        self._arrays(node, schema, base, loc, depth)
        self._objects(node, schema, base, loc, depth)
        for kw in ("unevaluatedItems", "unevaluatedProperties"):
            if kw in schema and d is not DRAFT_07:
                add(Unevaluated(kw, f"{loc}/{kw}", self._sub(schema, kw, base, loc, depth), node))

    def _numbers(self, node: Node, schema: Mapping[str, Any], loc: str) -> None:
        for kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if kw in schema:
                node.checks.append(Bound(kw, f"{loc}/{kw}", self._number(schema, kw, loc)))
        if "multipleOf" in schema:
            factor = self._number(schema, "multipleOf", loc)
            if factor <= 0:
                raise self.bad(loc, "multipleOf", "multipleOf must be greater than 0")
            node.checks.append(MultipleOf("multipleOf", f"{loc}/multipleOf", factor))

    def _strings(self, node: Node, schema: Mapping[str, Any], loc: str) -> None:
        for kw in ("minLength", "maxLength"):
            if kw in schema:
                node.checks.append(Length(kw, f"{loc}/{kw}", self._number(schema, kw, loc, True)))
        if "pattern" in schema:
            pattern = schema["pattern"]
            if not isinstance(pattern, str):
                raise self.bad(loc, "pattern", "pattern must be a string")
            regex = compile_pattern(pattern, self.limits, f"{loc}/pattern", "pattern")
            node.checks.append(Pattern("pattern", f"{loc}/pattern", regex))
        name = schema.get("format")
        if self.formats and isinstance(name, str) and name in FORMATS:
            node.checks.append(Format("format", f"{loc}/format", name, FORMATS[name]))

    def _arrays(
        self, node: Node, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> None:
        add = node.checks.append
        for kw in ("minItems", "maxItems"):
            if kw in schema:
                add(Length(kw, f"{loc}/{kw}", self._number(schema, kw, loc, True)))
        if schema.get("uniqueItems") is True:
            add(UniqueItems("uniqueItems", f"{loc}/uniqueItems"))
        prefix: list[Node] = []
        rest: Node | None = None
        if self.dialect is DRAFT_2020_12:
            if "prefixItems" in schema:
                prefix = self._subs(schema, "prefixItems", base, loc, depth)
            if "items" in schema:
                rest = self._sub(schema, "items", base, loc, depth)
        elif isinstance(schema.get("items"), list):
            prefix = self._subs(schema, "items", base, loc, depth)
            if "additionalItems" in schema:
                rest = self._sub(schema, "additionalItems", base, loc, depth)
        elif "items" in schema:
            rest = self._sub(schema, "items", base, loc, depth)
        if prefix or rest is not None:
            kw = "prefixItems" if "prefixItems" in schema else "items"
            add(Items(kw, f"{loc}/{kw}", prefix, rest))
        if "contains" in schema:
            with_counts = self.dialect is not DRAFT_07
            least = (
                self._number(schema, "minContains", loc, True)
                if with_counts and "minContains" in schema
                else 1
            )
            most = (
                self._number(schema, "maxContains", loc, True)
                if with_counts and "maxContains" in schema
                else None
            )
            sub = self._sub(schema, "contains", base, loc, depth)
            add(Contains("contains", f"{loc}/contains", sub, least, most))

    def _objects(
        self, node: Node, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> None:
        add = node.checks.append
        for kw in ("minProperties", "maxProperties"):
            if kw in schema:
                add(Length(kw, f"{loc}/{kw}", self._number(schema, kw, loc, True)))
        if "required" in schema:
            names = schema["required"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise self.bad(loc, "required", "required must be an array of strings")
            if names:
                add(Required("required", f"{loc}/required", names))
        props = self._map(schema, "properties", base, loc, depth)
        patterns = [
            (
                compile_pattern(
                    p, self.limits, f"{loc}/patternProperties/{escape(p)}", "patternProperties"
                ),
                sub,
            )
            for p, sub in self._map(schema, "patternProperties", base, loc, depth).items()
        ]
        additional = None
        if "additionalProperties" in schema:
            additional = self._sub(schema, "additionalProperties", base, loc, depth)
        if props or patterns or additional is not None:
            first = next(
                k
                for k in ("properties", "patternProperties", "additionalProperties")
                if k in schema
            )
            add(
                Properties(
                    first,
                    f"{loc}/{first}",
                    props=props,
                    patterns=patterns,
                    additional=additional,
                    additional_loc=f"{loc}/additionalProperties",
                    false_additional=schema.get("additionalProperties") is False,
                )
            )
        if "propertyNames" in schema:
            sub = self._sub(schema, "propertyNames", base, loc, depth)
            add(PropertyNames("propertyNames", f"{loc}/propertyNames", sub))
        self._dependent(node, schema, base, loc, depth)

    def _map(
        self, schema: Mapping[str, Any], kw: str, base: str, loc: str, depth: int
    ) -> dict[str, Node]:
        if kw not in schema:
            return {}
        value = schema[kw]
        if not isinstance(value, Mapping):
            raise self.bad(loc, kw, f"{kw} must be an object")
        here = f"{loc}/{kw}"
        return {k: self.node(s, base, f"{here}/{escape(k)}", depth + 1) for k, s in value.items()}

    def _dependent(
        self, node: Node, schema: Mapping[str, Any], base: str, loc: str, depth: int
    ) -> None:
        kws = (
            ("dependencies",)
            if self.dialect is DRAFT_07
            else ("dependentRequired", "dependentSchemas")
        )
        for kw in kws:
            value = schema.get(kw)
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise self.bad(loc, kw, f"{kw} must be an object")
            names: dict[str, list[str]] = {}
            subs: dict[str, Node] = {}
            for key, item in value.items():
                if isinstance(item, list) and kw != "dependentSchemas":
                    if not all(isinstance(n, str) for n in item):
                        raise self.bad(loc, kw, f"{kw}/{key} must be an array of strings")
                    names[key] = item
                elif kw != "dependentRequired":
                    subs[key] = self.node(item, base, f"{loc}/{kw}/{escape(key)}", depth + 1)
                else:
                    raise self.bad(loc, kw, f"{kw}/{key} must be an array of strings")
            node.checks.append(Dependent(kw, f"{loc}/{kw}", names, subs))

    def _resolve(self, check: Ref, ref: str, base: str) -> None:
        target, tbase, tloc = self.index.resolve(ref, base, check.loc, "$ref")
        check.target = self.node(target, tbase, tloc, 0)

    def _resolve_dynamic(self, check: DynamicRef, ref: str, base: str) -> None:
        if not self.dynamic:
            raise InvalidSchema(
                f"{check.kw} in a document fetched by the resolver is not supported",
                schema_path=check.loc,
                keyword=check.kw,
            )
        target, tbase, tloc = self.index.resolve(ref, base, check.loc, check.kw)
        check.target = self.node(target, tbase, tloc, 0)
        if check.kw == "$recursiveRef":
            name: str | None = "" if _get(target, "$recursiveAnchor") is True else None
        else:
            fragment = urldefrag(join(base, ref))[1]
            bookended = fragment and _get(target, "$dynamicAnchor") == fragment
            name = fragment if bookended else None
        if name is None:
            return
        for uri, anchors in self.index.dynamic.items():
            if name in anchors:
                sub = anchors[name]
                loc = self.index.loc_of.get(id(sub), uri)
                check.candidates[uri] = self.node(sub, uri, loc, 0)

    def resolve_refs(self) -> None:
        while self.pending:
            self.pending.pop()()

    def refuse_loops(self, root: Node) -> None:
        """Refuse a cycle of in-place applicators (it would recurse forever on any value)."""
        state: dict[int, int] = {}  # 1: on the current path, 2: done
        for start in (root, *self.memo.values()):
            if id(start) in state:
                continue
            state[id(start)] = 1
            stack = [(start, self._in_place(start))]
            while stack:
                node, todo = stack[-1]
                if not todo:
                    state[id(node)] = 2
                    stack.pop()
                    continue
                nxt = todo.pop()
                seen = state.get(id(nxt))
                if seen == 1:
                    raise InvalidSchema(
                        f"a $ref loop applies the subschema at {nxt.loc or '/'} to the same "
                        "value again and again",
                        schema_path=nxt.loc,
                        keyword="$ref",
                    )
                if seen is None:
                    state[id(nxt)] = 1
                    stack.append((nxt, self._in_place(nxt)))

    @staticmethod
    def _in_place(node: Node) -> list[Node]:
        return [child for c in node.checks for child, same in c.children() if same]


def compile_document(
    schema: Any, *, limits: Limits, formats: bool, resolver: RemoteResolver | None
) -> tuple[Node, str]:
    """Compile a schema document; return its root node and its dialect's name."""
    check_schema_size(schema, limits)
    dialect = _dialect_of(schema, DRAFT_2020_12)
    compiler = _Compiler(limits, formats, dialect, resolver)
    compiler.index.add_document(schema, DEFAULT_BASE, "")
    compiler.dynamic = compiler.index.has_dynamic_refs
    root = compiler.node(schema, DEFAULT_BASE, "", 0)
    compiler.resolve_refs()
    compiler.refuse_loops(root)
    return root, dialect.name

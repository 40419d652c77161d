"""Generate ``mcp_proto/types/_gen_*.py`` from the spec's ``schema.json``.

Usage::

    uv run python tools/gen_types.py [--revision 2026-07-28|2025-11-25] [--schema PATH] [--check]

Two revisions are generated: 2026-07-28 into ``mcp_proto/types/`` and the
``initialize``-era 2025-11-25 into ``mcp_proto/types/legacy/`` (served by the
dual-era server).  Without ``--revision`` both are written (or checked).

Every ``$defs`` entry becomes either a frozen, slotted, keyword-only attrs class
(object types) or a type alias (unions, primitives, free-form objects).  Inline
object types that have ``properties`` become classes named after their parent
and field (``ClientCapabilities.elicitation`` -> ``ClientCapabilitiesElicitation``).
JSON Schemas carried as data (``Tool.inputSchema``, ``Tool.outputSchema``,
``ElicitRequestFormParams.requestedSchema``) stay plain dicts so that they
round-trip byte for byte.

The output holds only declarations: the wire name of each field in its
metadata, Python types in its annotation.  The codec (``mcp_proto._codec``)
derives the (un)structuring code from them at import time.

``--check`` exits 1 when the files on disk differ from what would be
generated (the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_ROOT = ROOT.parent / "shared" / "spec"

# Area modules, in dependency order: a module may refer only to earlier ones.
AREAS: dict[str, list[str]] = {
    "base": [
        "JSONValue",
        "JSONObject",
        "JSONArray",
        "MetaObject",
        "RequestId",
        "ProgressToken",
        "Cursor",
        "Role",
        "LoggingLevel",
        "ResultType",
        "Icon",
        "Icons",
        "BaseMetadata",
        "Implementation",
        "Annotations",
        "Error",
        "ParseError",
        "InvalidRequestError",
        "MethodNotFoundError",
        "InvalidParamsError",
        "InternalError",
    ],
    "capabilities": [
        "ClientCapabilities",
        "ServerCapabilities",
        "RequestMetaObject",
        "ResultMetaObject",
        "NotificationMetaObject",
        "SubscriptionsListenResultMetaObject",
    ],
    "content": [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "TextResourceContents",
        "BlobResourceContents",
        "ResourceContents",
        "ResourceLink",
        "EmbeddedResource",
        "ContentBlock",
        "ToolUseContent",
        "ToolResultContent",
        "SamplingMessageContentBlock",
    ],
    "schemas": [
        "StringSchema",
        "NumberSchema",
        "BooleanSchema",
        "UntitledSingleSelectEnumSchema",
        "TitledSingleSelectEnumSchema",
        "UntitledMultiSelectEnumSchema",
        "TitledMultiSelectEnumSchema",
        "LegacyTitledEnumSchema",
        "SingleSelectEnumSchema",
        "MultiSelectEnumSchema",
        "EnumSchema",
        "PrimitiveSchemaDefinition",
    ],
    "jsonrpc": [
        "Request",
        "Notification",
        "Result",
        "EmptyResult",
        "ClientResult",
        "RequestParams",
        "NotificationParams",
        "PaginatedRequestParams",
        "PaginatedRequest",
        "PaginatedResult",
        "CacheableResult",
        "ResourceRequestParams",
        "JSONRPCRequest",
        "JSONRPCNotification",
        "JSONRPCErrorResponse",
        "HeaderMismatchError",
        "MissingRequiredClientCapabilityError",
        "UnsupportedProtocolVersionError",
    ],
    "tools": [
        "ToolAnnotations",
        "Tool",
        "ListToolsRequest",
        "ListToolsResult",
        "ListToolsResultResponse",
        "ToolListChangedNotification",
    ],
    "client": [
        "ModelHint",
        "ModelPreferences",
        "ToolChoice",
        "SamplingMessage",
        "CreateMessageRequestParams",
        "CreateMessageRequest",
        "CreateMessageResult",
        "Root",
        "ListRootsRequest",
        "ListRootsResult",
        "ElicitRequestFormParams",
        "ElicitRequestURLParams",
        "ElicitRequestParams",
        "ElicitRequest",
        "ElicitResult",
    ],
    "mrtr": [
        "InputRequest",
        "InputRequests",
        "InputResponse",
        "InputResponses",
        "InputRequiredResult",
        "InputResponseRequestParams",
    ],
    "tool_calls": [
        "CallToolRequestParams",
        "CallToolRequest",
        "CallToolResult",
        "CallToolResultResponse",
    ],
    "resources": [
        "Resource",
        "ResourceTemplate",
        "ListResourcesRequest",
        "ListResourcesResult",
        "ListResourcesResultResponse",
        "ListResourceTemplatesRequest",
        "ListResourceTemplatesResult",
        "ListResourceTemplatesResultResponse",
        "ReadResourceRequestParams",
        "ReadResourceRequest",
        "ReadResourceResult",
        "ReadResourceResultResponse",
        "ResourceListChangedNotification",
        "ResourceUpdatedNotificationParams",
        "ResourceUpdatedNotification",
    ],
    "prompts": [
        "PromptArgument",
        "Prompt",
        "PromptMessage",
        "ListPromptsRequest",
        "ListPromptsResult",
        "ListPromptsResultResponse",
        "GetPromptRequestParams",
        "GetPromptRequest",
        "GetPromptResult",
        "GetPromptResultResponse",
        "PromptListChangedNotification",
    ],
    "completion": [
        "PromptReference",
        "ResourceTemplateReference",
        "CompleteRequestParams",
        "CompleteRequest",
        "CompleteResult",
        "CompleteResultResponse",
    ],
    "discovery": ["DiscoverRequest", "DiscoverResult", "DiscoverResultResponse"],
    "subscriptions": [
        "SubscriptionFilter",
        "SubscriptionsListenRequestParams",
        "SubscriptionsListenRequest",
        "SubscriptionsListenResult",
        "SubscriptionsListenResultResponse",
        "SubscriptionsAcknowledgedNotificationParams",
        "SubscriptionsAcknowledgedNotification",
    ],
    "notifications": [
        "CancelledNotificationParams",
        "CancelledNotification",
        "ProgressNotificationParams",
        "ProgressNotification",
        "LoggingMessageNotificationParams",
        "LoggingMessageNotification",
    ],
    "messages": [
        "ServerResult",
        "JSONRPCResultResponse",
        "JSONRPCResponse",
        "JSONRPCMessage",
        "ClientRequest",
        "ClientNotification",
        "ServerNotification",
    ],
}

# Object-valued fields that carry a JSON Schema as data: kept as dicts.
SCHEMA_FIELDS = {
    ("Tool", "inputSchema"): "object",
    ("Tool", "outputSchema"): "",
    ("ElicitRequestFormParams", "requestedSchema"): "object",
}
# Optional fields whose malformed values are dropped (read as absent) instead of refusing
# the message: display-only data a receiver must not reject (META-12, edge case 44).
LENIENT = {("RequestMetaObject", "io.modelcontextprotocol/clientInfo")}
# Annotation overrides where the schema's type is wider or narrower than useful.
OVERRIDES = {
    # The generic response carries any result class (the schema says `Result`).
    ("JSONRPCResultResponse", "result"): "ServerResult",
}

# The initialize-era revision (2025-11-25): the same areas, less what 2026-07-28 added,
# plus its own definitions (the handshake, ping, logging/setLevel, subscribe, tasks,
# server-to-client requests).  Its files go to mcp_proto/types/legacy/.
_LEGACY_ADDED: dict[str, list[str]] = {
    "tasks": [
        "TaskStatus",
        "TaskMetadata",
        "RelatedTaskMetadata",
        "TaskAugmentedRequestParams",
        "Task",
        "CreateTaskResult",
        "GetTaskRequest",
        "GetTaskResult",
        "GetTaskPayloadRequest",
        "GetTaskPayloadResult",
        "CancelTaskRequest",
        "CancelTaskResult",
        "ListTasksRequest",
        "ListTasksResult",
        "TaskStatusNotificationParams",
        "TaskStatusNotification",
    ],
    "lifecycle": [
        "InitializeRequestParams",
        "InitializeRequest",
        "InitializeResult",
        "InitializedNotification",
        "PingRequest",
    ],
    "tools": ["ToolExecution"],
    "client": [
        "RootsListChangedNotification",
        "ElicitationCompleteNotification",
        "URLElicitationRequiredError",
    ],
    "resources": [
        "SubscribeRequestParams",
        "SubscribeRequest",
        "UnsubscribeRequestParams",
        "UnsubscribeRequest",
    ],
    "notifications": ["SetLevelRequestParams", "SetLevelRequest"],
    "messages": ["ServerRequest"],
}
_LEGACY_ORDER = (
    "base",
    "capabilities",
    "content",
    "schemas",
    "jsonrpc",
    "tasks",
    "lifecycle",
    "tools",
    "client",
    "tool_calls",
    "resources",
    "prompts",
    "completion",
    "notifications",
    "messages",
)


# Unions that name task results, so come after the tasks area.
_LEGACY_MOVED = {"ClientResult": "messages"}


def _legacy_areas(legacy_names: set[str]) -> dict[str, list[str]]:
    """The modern area table kept to the names 2025-11-25 has, plus its own."""
    areas: dict[str, list[str]] = {}
    for area in _LEGACY_ORDER:
        kept = [
            n
            for n in AREAS.get(area, [])
            if n in legacy_names and _LEGACY_MOVED.get(n, area) == area
        ]
        moved = [n for n, to in _LEGACY_MOVED.items() if to == area]
        areas[area] = kept + _LEGACY_ADDED.get(area, []) + moved
    return areas


# Aliases that are spelled out by hand because Python has no better spelling.
JSON_ALIASES = {
    "JSONValue": "Any",
    "JSONObject": "dict[str, Any]",
    "JSONArray": "list[Any]",
    "MetaObject": "dict[str, Any]",
}
# Required by the schema but read as optional: CACHE-06 tells clients to assume a
# ttlMs of 0 when an older server leaves it out (and the spec's own
# ReadResourceResultResponse example has neither).  Servers must still send them;
# the server connection enforces that on send.
TOLERATED_ABSENT = {"ttlMs", "cacheScope"}
PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
# Only in a type list (2025-11-25 ``Task.ttl``: ``["integer", "null"]``).
NULLABLE = {**PRIMITIVES, "null": "None"}


ENVELOPE_ORDER = ("jsonrpc", "id", "method", "params", "result", "error")


def field_rank(wire: str, required: bool) -> tuple[int, int, bool]:
    """Field order: JSON-RPC envelope keys first, then required, optional, ``_meta`` last."""
    if wire in ENVELOPE_ORDER:
        return (0, ENVELOPE_ORDER.index(wire), False)
    return (1, 0 if required else 1, wire == "_meta")


def snake(wire: str) -> str:
    """Python attribute name for a wire name (``io.modelcontextprotocol/x`` -> ``x``)."""
    name = wire.rsplit("/", 1)[-1].lstrip("$_")
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return name.lower()


def pascal(wire: str) -> str:
    base = wire.rsplit("/", 1)[-1].lstrip("$_")
    return base[:1].upper() + base[1:]


class ClassDef:
    def __init__(self, name: str, area: str, schema: dict[str, Any], inline_of: str | None):
        self.name = name
        self.area = area
        self.schema = schema
        self.inline_of = inline_of
        self.fields: list[tuple[str, str, str, str | None, bool]] = []
        self.deps: set[str] = set()


class Profile:
    """What differs between the generated revisions: the area table, where files go,
    the annotation overrides and the title of the docstrings."""

    def __init__(
        self,
        revision: str,
        areas: dict[str, list[str]],
        out_dir: Path,
        overrides: dict[tuple[str, str], str],
        model_import: str,
    ) -> None:
        self.revision = revision
        self.areas = areas
        self.out_dir = out_dir
        self.overrides = overrides
        self.model_import = model_import


class Generator:
    def __init__(self, defs: dict[str, Any], profile: Profile):
        self.defs = defs
        self.profile = profile
        areas = profile.areas
        self.area_of: dict[str, str] = {}
        for area, names in areas.items():
            for name in names:
                if name in self.area_of:
                    raise SystemExit(f"{name} is listed twice")
                self.area_of[name] = area
        missing = sorted(set(defs) - set(self.area_of))
        extra = sorted(set(self.area_of) - set(defs))
        if missing or extra:
            raise SystemExit(f"area table out of date: missing {missing}, unknown {extra}")
        self.classes: dict[str, ClassDef] = {}
        self.aliases: dict[str, tuple[str, str, set[str]]] = {}  # name -> (area, expr, deps)
        self.order: dict[str, list[str]] = {area: [] for area in areas}
        self.areas = areas

    # -- type expressions -------------------------------------------------------
    def type_of(self, s: dict[str, Any], owner: str, wire: str, deps: set[str]) -> str:
        if "$ref" in s:
            ref = s["$ref"].rsplit("/", 1)[-1]
            deps.add(ref)
            return ref
        if "const" in s:
            return f"Literal[{json.dumps(s['const'])}]"
        if "enum" in s:
            return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"]) + "]"
        if "allOf" in s:
            merged = self.merge_all_of(s["allOf"])
            return self.inline_class(merged, owner, wire, deps)
        if "anyOf" in s:
            parts = [self.type_of(m, owner, wire, deps) for m in s["anyOf"]]
            return " | ".join(dict.fromkeys(parts))
        t = s.get("type")
        if isinstance(t, list):
            return " | ".join(NULLABLE[x] for x in t)
        if t in PRIMITIVES:
            return PRIMITIVES[t]
        if t == "array":
            items = s.get("items")
            inner = self.type_of(items, owner, wire + "Item", deps) if items else "Any"
            return f"Sequence[{inner}]"
        if t == "object":
            if "properties" in s:
                return self.inline_class(s, owner, wire, deps)
            extra = s.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"dict[str, {self.type_of(extra, owner, wire + 'Value', deps)}]"
            return "dict[str, Any]"
        if not s or set(s) <= {"description"}:
            return "Any"
        raise SystemExit(f"unsupported schema at {owner}.{wire}: {s}")

    def merge_all_of(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for item in parts:
            part = self.defs[item["$ref"].rsplit("/", 1)[-1]] if "$ref" in item else item
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += [
                r for r in part.get("required", []) if r not in merged["required"]
            ]
        return merged

    def inline_class(self, s: dict[str, Any], owner: str, wire: str, deps: set[str]) -> str:
        name = owner + pascal(wire)
        if name not in self.classes:
            self.add_class(name, self.area_of[owner], s, inline_of=owner)
        deps.add(name)
        return name

    # -- definitions -------------------------------------------------------------
    def add_class(self, name: str, area: str, s: dict[str, Any], inline_of: str | None = None):
        self.area_of[name] = area
        cls = ClassDef(name, area, s, inline_of)
        self.classes[name] = cls
        required = set(s.get("required", ())) - TOLERATED_ABSENT
        seen: set[str] = set()
        props = s.get("properties", {})
        for wire in sorted(props, key=lambda w: field_rank(w, w in required)):
            attr = snake(wire)
            if attr in seen or attr == "extra":
                raise SystemExit(f"attribute name clash in {name}: {attr}")
            seen.add(attr)
            ps = props[wire]
            ann = self.profile.overrides.get((name, wire))
            if wire == "resultType":
                ann = (
                    "str"
                    if name == "Result"
                    else f"Literal[{self.default_for(name, wire, ps, True)}]"
                )
            elif ann is not None:
                cls.deps.add(ann)
            elif (name, wire) in SCHEMA_FIELDS:
                ann = "dict[str, Any]"
            else:
                ann = self.type_of(ps, name, wire, cls.deps)
            default = self.default_for(name, wire, ps, wire in required)
            cls.fields.append((attr, wire, ann, default, wire in required))
        self.order[area].append(name)

    def default_for(self, cls: str, wire: str, s: dict[str, Any], required: bool) -> str | None:
        if "const" in s and required:
            return json.dumps(s["const"])
        if wire == "resultType":
            return json.dumps("input_required" if cls == "InputRequiredResult" else "complete")
        if not required or wire == "_meta":
            return "None"
        return None

    def run(self) -> None:
        for area, names in self.areas.items():
            for name in names:
                s = self.defs[name]
                if name in JSON_ALIASES:
                    self.aliases[name] = (area, JSON_ALIASES[name], set())
                    self.order[area].append(name)
                elif s.get("type") == "object" and "properties" in s:
                    self.add_class(name, area, s)
                elif "allOf" in s:  # 2025-11-25's task results: one object, merged
                    self.add_class(name, area, self.merge_all_of(s["allOf"]))
                else:
                    deps: set[str] = set()
                    expr = self.type_of(s, name, "", deps)
                    self.aliases[name] = (area, expr, deps)
                    self.order[area].append(name)
        self.check_layering()

    def deps_of(self, name: str) -> set[str]:
        if name in self.classes:
            return self.classes[name].deps
        return self.aliases[name][2]

    def check_layering(self) -> None:
        rank = {area: i for i, area in enumerate(self.areas)}
        for name in self.area_of:
            for dep in self.deps_of(name):
                if rank[self.area_of[dep]] > rank[self.area_of[name]]:
                    raise SystemExit(f"{name} ({self.area_of[name]}) needs later {dep}")

    # -- emitting ---------------------------------------------------------------
    def emit_area(self, area: str) -> str:
        names = self.order[area]
        imports: dict[str, set[str]] = {}
        for name in names:
            for dep in self.deps_of(name):
                dep_area = self.area_of[dep]
                if dep_area != area:
                    imports.setdefault(dep_area, set()).add(dep)
        body: list[str] = []
        emitted: set[str] = set()
        for name in self.sorted_local(names, area):
            body.append(self.emit_one(name))
            emitted.add(name)
        text = "\n".join(body)
        abc = [n for n in ("Mapping", "Sequence") if re.search(rf"\b{n}\[", text)]
        typing_names = [n for n in ("Any", "Literal", "TypeAlias") if re.search(rf"\b{n}\b", text)]
        lines = [
            f'"""MCP {self.profile.revision} types: {area.replace("_", " ")}.',
            "",
            "Generated by tools/gen_types.py from the spec's schema.json; do not edit.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
        ]
        if abc:
            lines.append(f"from collections.abc import {', '.join(abc)}")
        if typing_names:
            lines.append(f"from typing import {', '.join(typing_names)}")
        if self.classes.keys() & set(names):
            model = self.profile.model_import
            lines += ["", "from attrs import field, frozen", "", f"from {model} import EMPTY"]
        for dep_area in sorted(imports):
            if dep_area in imports:
                names_list = ", ".join(sorted(imports[dep_area]))
                lines.append(f"from ._gen_{dep_area} import {names_list}")
        lines += [
            "",
            "__all__ = [",
            *[f'    "{n}",' for n in self.sorted_local(names, area)],
            "]",
            "",
        ]
        return "\n".join(lines) + "\n" + "\n".join(body)

    def emit_index(self) -> str:
        lines = [
            f'"""The complete MCP {self.profile.revision} message model: one name per schema'
            " definition.",
            "",
            "Object types are frozen, slotted, keyword-only attrs classes; unions and",
            "primitives are type aliases.  Attribute names are snake_case; each field's",
            'wire name is in its ``metadata["wire"]``; unknown wire keys are kept in',
            "``extra``.  Classes whose name joins a definition and a field",
            "(``ClientCapabilitiesElicitation``) are the schema's inline object types.",
            "",
            "Generated by tools/gen_types.py from the spec's schema.json; do not edit.",
            '"""',
            "",
        ]
        every: list[str] = []
        for area in self.areas:
            names = list(self.sorted_local(self.order[area], area))
            every += names
            lines.append(f"from ._gen_{area} import {', '.join(names)}")
        lines += ["", "__all__ = [", *[f'    "{n}",' for n in sorted(every)], "]", ""]
        return "\n".join(lines)

    def sorted_local(self, names: list[str], area: str) -> Iterator[str]:
        done: set[str] = set()
        names_set = set(names)

        def visit(n: str, stack: tuple[str, ...]) -> Iterator[str]:
            if n in done:
                return
            if n in stack:
                return  # recursive types (JSONValue) are fine with string annotations
            for dep in sorted(self.deps_of(n)):
                if dep in names_set and self.area_of[dep] == area:
                    yield from visit(dep, (*stack, n))
            if n not in done:
                done.add(n)
                yield n

        for n in names:
            yield from visit(n, ())

    def emit_one(self, name: str) -> str:
        if name in self.aliases:
            return f"{name}: TypeAlias = {self.aliases[name][1]}\n\n"
        cls = self.classes[name]
        if cls.inline_of:
            doc = [f'    """An inline object type of ``{cls.inline_of}``.']
        else:
            doc = [f'    """The ``{name}`` schema definition.']
        if cls.fields:
            wires = ", ".join(f"``{w}``{'' if req else '?'}" for _, w, _, _, req in cls.fields)
            doc += [
                "",
                textwrap.fill(
                    f"Wire names (? = optional): {wires}.",
                    92,
                    initial_indent="    ",
                    subsequent_indent="    ",
                ),
            ]
        doc.append('    """')
        out = ["@frozen(kw_only=True)", f"class {name}:", *doc, ""]
        for attr, wire_name, ann, default, required in cls.fields:
            ann_text = ann
            if default == "None" and ann != "Any":
                ann_text = f"{ann} | None"
            meta = f'{{"wire": {json.dumps(wire_name)}'
            if (
                required
                and default is not None
                and not (wire_name == "resultType" and default == '"complete"')
            ):
                meta += ', "required": True'
            for key in ("minimum", "maximum", "maxItems"):
                if key in cls.schema["properties"][wire_name]:
                    meta += f', "{snake(key)}": {cls.schema["properties"][wire_name][key]}'
            wire_type = cls.schema["properties"][wire_name].get("type")
            if required and isinstance(wire_type, list) and "null" in wire_type:
                meta += ', "nullable": True'
            if SCHEMA_FIELDS.get((name, wire_name)):
                meta += f', "json_schema": {json.dumps(SCHEMA_FIELDS[name, wire_name])}'
            if (name, wire_name) in LENIENT:
                meta += ', "lenient": True'
            meta += "}"
            args = ([f"default={default}"] if default is not None else []) + [f"metadata={meta}"]
            out.append(f"    {attr}: {ann_text} = field({', '.join(args)})")
        out.append("    extra: Mapping[str, Any] = EMPTY")
        return "\n".join(out) + "\n\n\n"


def patch(defs: dict[str, Any]) -> dict[str, Any]:
    """Where ``schema.json`` is narrower than the spec's prose, follow the prose.

    ``ElicitResult.content`` values: ``schema.json`` allows integers only, but the
    elicitation page's number fields (``"type": "number"``, e.g. ``age``) are answered
    with any number, and ``schema.ts`` says ``number`` (ELIC-25).
    """
    value = defs["ElicitResult"]["properties"]["content"]["additionalProperties"]
    for branch in value.get("anyOf", ()):
        if isinstance(branch.get("type"), list) and "integer" in branch["type"]:
            branch["type"] = [*branch["type"], "number"]
    return defs


def _profiles() -> dict[str, Profile]:
    legacy_schema = SPEC_ROOT / "2025-11-25" / "schema.json"
    legacy_names = (
        set(json.loads(legacy_schema.read_text())["$defs"]) if legacy_schema.exists() else set()
    )
    return {
        "2026-07-28": Profile(
            "2026-07-28", AREAS, ROOT / "mcp_proto" / "types", OVERRIDES, ".._model"
        ),
        "2025-11-25": Profile(
            "2025-11-25",
            _legacy_areas(legacy_names),
            ROOT / "mcp_proto" / "types" / "legacy",
            {},
            "..._model",
        ),
    }


PROFILES = _profiles()


def generate(schema_path: Path, revision: str = "2026-07-28") -> dict[Path, str]:
    profile = PROFILES[revision]
    defs = patch(json.loads(schema_path.read_text())["$defs"])
    gen = Generator(defs, profile)
    gen.run()
    out = profile.out_dir
    files = {out / f"_gen_{area}.py": gen.emit_area(area) for area in profile.areas}
    files[out / "__init__.py"] = gen.emit_index()
    return {path: ruff_format(text) for path, text in files.items()}


def ruff_format(text: str) -> str:
    """Format generated code with the project's ruff settings (ruff is a dev dependency)."""
    for args in (["check", "--fix", "--select", "I", "--quiet"], ["format"]):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                *args,
                "--stdin-filename",
                "mcp_proto/types/gen.py",
                "-",
            ],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        text = done.stdout
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--revision", choices=sorted(PROFILES), help="default: every revision")
    ap.add_argument("--schema", type=Path, help="default: the revision's spec schema.json")
    ap.add_argument("--check", action="store_true", help="fail if the files are stale")
    args = ap.parse_args(argv)
    revisions = [args.revision] if args.revision else list(PROFILES)
    if args.schema is not None and len(revisions) != 1:
        ap.error("--schema needs --revision")
    files: dict[Path, str] = {}
    for revision in revisions:
        schema = args.schema or SPEC_ROOT / revision / "schema.json"
        files.update(generate(schema, revision))
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in files.items():
        p.write_text(text)
    print(f"wrote {len(files)} files ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

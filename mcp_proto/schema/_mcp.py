"""Where MCP needs schema validation: tool arguments and results, elicitation forms.

Pure helpers over ``compile_schema`` (so every schema is compiled once and cached); the
connection classes do not know tool lists, so the application calls these:

* server, before a tool handler runs: ``validate_tool_arguments(tool, arguments)`` returns
  ``None`` (run the handler) or a ``CallToolResult`` with ``isError: true`` that says what is
  wrong (input validation errors are tool execution errors, TOOL-27);
* server, after the handler: ``check_tool_result(tool, result)`` returns the result, or an
  ``isError`` result when its ``structuredContent`` does not match ``outputSchema`` (the
  server MUST conform, tools.mdx "Output Schema");
* client, on a result: ``structured_content_failures(tool, result)`` (clients SHOULD validate);
* client, when a server asks: ``check_elicitation_schema(schema)`` (ELIC-11's restricted form);
  before sending the user's answer, and server on the retry that carries it:
  ``elicitation_answer_failures(schema, content)``.

A tool whose own schema is invalid raises ``InvalidSchema`` (that is the tool author's bug, or
a hostile server's, never a reason to skip validation). A ``LimitExceeded`` caused by the
arguments becomes an ``isError`` result on the server side and propagates elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..types import CallToolResult, TextContent, Tool
from ._dialects import dialect_named
from ._errors import Failure, InvalidSchema, LimitExceeded, UnsupportedDialect
from ._limits import DEFAULT_LIMITS, Limits
from ._validator import compile_schema

__all__ = [
    "ELICITATION_FORMATS",
    "check_elicitation_schema",
    "check_tool_result",
    "describe_failures",
    "elicitation_answer_failures",
    "structured_content_failures",
    "tool_argument_failures",
    "validate_tool_arguments",
]

#: The ``format`` values a form field may declare (ELIC-11).
ELICITATION_FORMATS = frozenset({"email", "uri", "date", "date-time"})


def describe_failures(failures: Sequence[Failure], limit: int = 10) -> str:
    """One line per failure (at most ``limit``), for a tool-error text or a log."""
    lines = [str(f) for f in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"... and {len(failures) - limit} more")
    return "\n".join(lines)


def _error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


def tool_argument_failures(
    tool: Tool, arguments: Mapping[str, Any] | None, *, limits: Limits = DEFAULT_LIMITS
) -> list[Failure]:
    """How ``arguments`` (absent means ``{}``) fail ``tool.inputSchema`` (TOOL-09)."""
    validator = compile_schema(tool.input_schema, limits=limits)
    return validator.failures({} if arguments is None else arguments)


def validate_tool_arguments(
    tool: Tool, arguments: Mapping[str, Any] | None, *, limits: Limits = DEFAULT_LIMITS
) -> CallToolResult | None:
    """``None`` when the arguments conform, else the ``isError`` result to send back."""
    try:
        failures = tool_argument_failures(tool, arguments, limits=limits)
    except LimitExceeded as e:
        return _error_result(f"Invalid arguments for tool {tool.name!r}: {e}")
    if not failures:
        return None
    return _error_result(
        f"Invalid arguments for tool {tool.name!r}:\n{describe_failures(failures)}"
    )


def structured_content_failures(
    tool: Tool, result: CallToolResult, *, limits: Limits = DEFAULT_LIMITS
) -> list[Failure]:
    """How ``result.structuredContent`` fails ``tool.outputSchema`` (TOOL-11).

    Empty when the tool has no output schema or the result is an error (``isError``). A
    successful result without ``structuredContent`` fails when the tool declares one.
    """
    if tool.output_schema is None or result.is_error:
        return []
    if result.structured_content is None:
        return [
            Failure(
                instance_path="",
                keyword="outputSchema",
                schema_path="",
                message="the tool declares an outputSchema but the result has no "
                "structuredContent",
            )
        ]
    return compile_schema(tool.output_schema, limits=limits).failures(result.structured_content)


def check_tool_result(
    tool: Tool, result: CallToolResult, *, limits: Limits = DEFAULT_LIMITS
) -> CallToolResult:
    """``result`` when it conforms to the tool's ``outputSchema``, else an ``isError`` result."""
    try:
        failures = structured_content_failures(tool, result, limits=limits)
    except LimitExceeded as e:
        return _error_result(f"Tool {tool.name!r} returned an invalid result: {e}")
    if not failures:
        return result
    return _error_result(
        f"Tool {tool.name!r} returned structured content that does not match its "
        f"outputSchema:\n{describe_failures(failures)}"
    )


# -- elicitation ------------------------------------------------------------------------------

_ANNOTATIONS = {"title", "description", "$comment"}
_ROOT_KEYS = {"$schema", "type", "properties", "required"} | _ANNOTATIONS
_FIELD_KEYS = {
    "string": {
        "type",
        "minLength",
        "maxLength",
        "format",
        "default",
        "enum",
        "enumNames",
        "oneOf",
    },
    "number": {"type", "minimum", "maximum", "default"},
    "integer": {"type", "minimum", "maximum", "default"},
    "boolean": {"type", "default"},
    "array": {"type", "items", "minItems", "maxItems", "default"},
}


def _bad(path: str, keyword: str | None, reason: str) -> InvalidSchema:
    return InvalidSchema(
        f"not an elicitation form schema: {reason}", schema_path=path, keyword=keyword
    )


def _titled(options: Any, path: str, keyword: str) -> None:
    if not isinstance(options, list) or not options:
        raise _bad(path, keyword, f"{keyword} must be a non-empty array of {{const, title}}")
    for i, option in enumerate(options):
        if (
            not isinstance(option, Mapping)
            or not isinstance(option.get("const"), str)
            or not isinstance(option.get("title"), str)
            or set(option) - {"const", "title", "description"}
        ):
            raise _bad(
                f"{path}/{i}", keyword, "each option must be {const: string, title: string}"
            )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _field(name: str, schema: Any) -> None:
    path = f"/properties/{name.replace('~', '~0').replace('/', '~1')}"
    if not isinstance(schema, Mapping):
        raise _bad(path, None, "a field schema must be an object")
    kind = schema.get("type")
    allowed = _FIELD_KEYS.get(kind) if isinstance(kind, str) else None
    if allowed is None:
        raise _bad(
            path,
            "type",
            f"a field's type must be string, number, integer, boolean or "
            f"array (of enum options), got {kind!r}",
        )
    extra = set(schema) - allowed - _ANNOTATIONS
    if extra:
        raise _bad(
            path,
            sorted(extra)[0],
            f"keyword {sorted(extra)[0]!r} is not allowed in a {kind} field",
        )
    if "format" in schema and schema["format"] not in ELICITATION_FORMATS:
        raise _bad(
            f"{path}/format",
            "format",
            f"format must be one of {sorted(ELICITATION_FORMATS)}, got {schema['format']!r}",
        )
    if "enum" in schema and not (_strings(schema["enum"]) and schema["enum"]):
        raise _bad(f"{path}/enum", "enum", "enum must be a non-empty array of strings")
    if "enumNames" in schema and not (
        _strings(schema["enumNames"]) and len(schema["enumNames"]) == len(schema.get("enum", ()))
    ):
        raise _bad(f"{path}/enumNames", "enumNames", "enumNames must name each enum value")
    if "oneOf" in schema:
        _titled(schema["oneOf"], f"{path}/oneOf", "oneOf")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, Mapping):
            raise _bad(f"{path}/items", "items", "a multi-select field needs items")
        if "anyOf" in items and set(items) <= {"anyOf"} | _ANNOTATIONS:
            _titled(items["anyOf"], f"{path}/items/anyOf", "anyOf")
        elif not (
            items.get("type") == "string"
            and _strings(items.get("enum"))
            and items["enum"]
            and set(items) <= {"type", "enum"} | _ANNOTATIONS
        ):
            raise _bad(
                f"{path}/items",
                "items",
                "items must be {type: string, enum: [...]} or {anyOf: [{const, title}, ...]}",
            )


def check_elicitation_schema(schema: Any) -> None:
    """Raise ``InvalidSchema`` unless ``schema`` is a form schema elicitation allows (ELIC-11).

    A flat object: ``type: "object"``, ``properties`` of primitive fields (string, number,
    integer, boolean, single- and multi-select enums, titled or not, legacy ``enumNames``),
    optional ``required`` naming those fields, optional ``$schema`` of a supported dialect, and
    the annotations ``title``/``description``/``$comment``. It must also compile.
    """
    if not isinstance(schema, Mapping):
        raise _bad("", None, "the requested schema must be an object")
    if "$schema" in schema and (
        not isinstance(schema["$schema"], str) or dialect_named(schema["$schema"]) is None
    ):
        raise UnsupportedDialect(schema["$schema"])
    extra = set(schema) - _ROOT_KEYS
    if extra:
        raise _bad(
            f"/{sorted(extra)[0]}",
            sorted(extra)[0],
            f"keyword {sorted(extra)[0]!r} is not allowed at the top of a form",
        )
    if schema.get("type") != "object":
        raise _bad("/type", "type", 'the requested schema must have type "object"')
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        raise _bad("/properties", "properties", "properties must be an object")
    for name, field in props.items():
        _field(name, field)
    required = schema.get("required", [])
    if not _strings(required) or set(required) - set(props):
        raise _bad("/required", "required", "required must list names of the form's fields")
    compile_schema(schema, formats=True)


def elicitation_answer_failures(
    schema: Any, content: Mapping[str, Any] | None, *, limits: Limits = DEFAULT_LIMITS
) -> list[Failure]:
    """How a form answer (``ElicitResult.content`` of an ``accept``) fails its form schema.

    The form schema is checked first (``InvalidSchema`` if it is not one). Formats are
    asserted. Stricter than plain JSON Schema on one point: a key that is not a field of the
    form is a failure (keyword ``properties``), as the form could not have produced it.
    """
    check_elicitation_schema(schema)
    answer = {} if content is None else content
    failures = compile_schema(schema, limits=limits, formats=True).failures(answer)
    fields = schema["properties"]
    for key in answer:
        if key not in fields:
            failures.append(
                Failure(
                    instance_path="/" + key.replace("~", "~0").replace("/", "~1"),
                    keyword="properties",
                    schema_path="/properties",
                    message=f"{key!r} is not a field of the form",
                )
            )
    return failures

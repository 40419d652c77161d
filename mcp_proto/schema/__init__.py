"""JSON Schema validation of untrusted schemas and values (SCHEMA-01..10, TOOL-09/11, ELIC-11).

A compact validator written for this library (``docs/schema.md`` says why, with the
measurement): JSON Schema 2020-12 (the default), 2019-09 and draft-07; every ``$ref`` resolved
inside the document only; resource bounds with a deterministic step budget (``Limits``);
failures carrying JSON pointers and the failing keyword. On top of it, the helpers MCP needs:
tool arguments and structured results, and elicitation forms and answers.

May import: ``mcp_proto.types`` and the error model only (``docs/architecture.md``).

>>> from mcp_proto.schema import compile_schema
>>> v = compile_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
>>> v.is_valid({"n": 1}), [str(f) for f in v.failures({"n": "x"})]
(True, ['/n: expected integer, got string'])
"""

from ._dialects import DIALECTS
from ._errors import (
    Failure,
    InvalidSchema,
    LimitExceeded,
    SchemaError,
    UnresolvableRef,
    UnsupportedDialect,
    ValidationFailed,
)
from ._limits import DEFAULT_LIMITS, Limits
from ._mcp import (
    ELICITATION_FORMATS,
    check_elicitation_schema,
    check_tool_result,
    describe_failures,
    elicitation_answer_failures,
    structured_content_failures,
    tool_argument_failures,
    validate_tool_arguments,
)
from ._refs import RemoteResolver
from ._validator import DEFAULT_CACHE, SchemaCache, Validator, compile_schema

__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_LIMITS",
    "DIALECTS",
    "ELICITATION_FORMATS",
    "Failure",
    "InvalidSchema",
    "LimitExceeded",
    "Limits",
    "RemoteResolver",
    "SchemaCache",
    "SchemaError",
    "UnresolvableRef",
    "UnsupportedDialect",
    "ValidationFailed",
    "Validator",
    "check_elicitation_schema",
    "check_tool_result",
    "compile_schema",
    "describe_failures",
    "elicitation_answer_failures",
    "structured_content_failures",
    "tool_argument_failures",
    "validate_tool_arguments",
]

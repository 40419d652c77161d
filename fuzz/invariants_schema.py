"""The invariants of the JSON Schema harness (``mcp_proto.schema``, ``docs/schema.md``).

The fuzzer's bytes are read as JSON.  A JSON array whose first item is an object or a
boolean is a schema followed by instances; anything else is a schema that is also its own
instance.  The schema is compiled with ``formats`` off and on (through a private
``SchemaCache``, the code path of ``DEFAULT_CACHE``), and each instance validated:

* only ``InvalidSchema`` (and its subclasses) or ``LimitExceeded`` escape ``compile_schema``,
  only ``LimitExceeded`` escapes ``is_valid`` and ``failures``, and ``validate`` raises
  ``ValidationFailed`` carrying exactly the failures;
* ``is_valid(x) == (not failures(x))`` whenever neither hit a bound;
* each failure's ``instance_path`` is a JSON pointer to a value of the instance, and its
  ``schema_path`` one to a value of the schema document;
* time is bounded by the step budget: under atheris ``-timeout=20`` turns a runaway into a
  failure.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_proto.schema import (
    InvalidSchema,
    LimitExceeded,
    SchemaCache,
    ValidationFailed,
    Validator,
    compile_schema,
)

CACHE = SchemaCache(maxsize=64)
#: instances validated per schema
MAX_INSTANCES = 4


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def load_json(data: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when ``data`` is JSON (integers of any size), else ``(False, None)``."""
    try:
        return True, json.loads(data, parse_constant=_refuse)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return False, None


def resolve(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901); ``AssertionError`` when there is none."""
    if pointer == "":
        return document
    assert pointer.startswith("/"), pointer
    value = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if type(value) is dict:
            assert token in value, (pointer, token)
            value = value[token]
        elif type(value) is list:
            assert token.isdigit() and int(token) < len(value), (pointer, token)
            value = value[int(token)]
        else:
            raise AssertionError(f"pointer {pointer!r} goes through a scalar")
    return value


def _check_instance(validator: Validator, schema: Any, instance: Any) -> None:
    try:
        valid: bool | None = validator.is_valid(instance)
    except LimitExceeded:
        valid = None
    try:
        failures = validator.failures(instance)
    except LimitExceeded:
        return
    if valid is not None:
        assert valid == (not failures), (valid, failures)
    for failure in failures:
        resolve(instance, failure.instance_path)
        resolve(schema, failure.schema_path)
    try:
        validator.validate(instance)
    except ValidationFailed as e:
        assert e.failures == tuple(failures)
    except LimitExceeded:
        pass
    else:
        assert not failures


def check_schema(data: bytes) -> None:
    """A fuzzed schema and instances through ``compile_schema`` and the ``Validator``."""
    ok, value = load_json(data)
    if not ok:
        return
    if type(value) is list and value and type(value[0]) in (dict, bool):
        schema, instances = value[0], [*value[1:MAX_INSTANCES], value[0]]
    else:
        schema, instances = value, [value]
    if type(schema) not in (dict, bool):
        return
    for formats in (False, True):
        try:
            validator = compile_schema(schema, formats=formats, cache=CACHE)
        except (InvalidSchema, LimitExceeded):
            continue
        for instance in instances:
            _check_instance(validator, schema, instance)

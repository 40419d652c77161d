"""The schema validator's exceptions and its failure record.

Three things can go wrong, and each has its own type:

* the schema cannot be used (``InvalidSchema``, with the subclasses ``UnsupportedDialect`` and
  ``UnresolvableRef``): raised by compilation, never by validation, and never "validated
  loosely" instead (SCHEMA-04, SCHEMA-08);
* a resource bound was exceeded (``LimitExceeded``): raised by compilation or validation, it
  names the bound (``bound``, an attribute name of ``Limits``) and its value;
* the instance does not conform: not an exception but a list of ``Failure`` records (an
  exception, ``ValidationFailed``, wraps them for callers that prefer raising).
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

__all__ = [
    "Failure",
    "InvalidSchema",
    "LimitExceeded",
    "SchemaError",
    "UnresolvableRef",
    "UnsupportedDialect",
    "ValidationFailed",
]


class SchemaError(Exception):
    """Base class of every exception of the schema validator."""


class InvalidSchema(SchemaError, ValueError):
    """The schema is not a valid schema of its dialect, or uses something refused here.

    ``schema_path`` is a JSON pointer into the schema document (``""`` for its root) and
    ``keyword`` the keyword at fault (``None`` when the fault is not one keyword's).
    """

    def __init__(self, reason: str, *, schema_path: str = "", keyword: str | None = None):
        where = f" at {schema_path}" if schema_path else ""
        super().__init__(f"Invalid schema{where}: {reason}")
        self.reason = reason
        self.schema_path = schema_path
        self.keyword = keyword


class UnsupportedDialect(InvalidSchema):
    """``$schema`` names a dialect this validator does not implement (SCHEMA-04)."""

    def __init__(self, dialect: object, *, schema_path: str = ""):
        super().__init__(
            f"unsupported JSON Schema dialect {dialect!r} (supported: 2020-12, 2019-09, draft-07)",
            schema_path=schema_path,
            keyword="$schema",
        )
        self.dialect = dialect


class UnresolvableRef(InvalidSchema):
    """A ``$ref`` points outside the document and no resolver was given (SCHEMA-06/08)."""

    def __init__(self, ref: str, reason: str, *, schema_path: str = "", keyword: str = "$ref"):
        super().__init__(
            f"cannot resolve {keyword} {ref!r}: {reason}", schema_path=schema_path, keyword=keyword
        )
        self.ref = ref


class LimitExceeded(SchemaError):
    """A resource bound was exceeded; ``bound`` is the ``Limits`` attribute that was hit."""

    def __init__(self, bound: str, limit: int, what: str):
        super().__init__(f"{what} exceeds the bound {bound}={limit}")
        self.bound = bound
        self.limit = limit


@frozen(kw_only=True)
class Failure:
    """One way an instance fails its schema.

    ``instance_path`` is a JSON pointer to the failing value in the instance (``""`` for the
    instance itself), ``keyword`` the failing keyword, ``schema_path`` a JSON pointer to that
    keyword in the schema document (through ``$ref`` it is the target's own location), and
    ``message`` says what is wrong in words fit for a tool-error text.
    """

    instance_path: str
    keyword: str
    schema_path: str
    message: str

    def __str__(self) -> str:
        return f"{self.instance_path or '/'}: {self.message}"


class ValidationFailed(SchemaError, ValueError):
    """Raised by ``Validator.validate``: the instance does not conform; ``failures`` say how."""

    def __init__(self, failures: Sequence[Failure]):
        self.failures = tuple(failures)
        shown = "; ".join(str(f) for f in self.failures[:5])
        more = f" (and {len(self.failures) - 5} more)" if len(self.failures) > 5 else ""
        super().__init__(f"instance does not match the schema: {shown}{more}")

"""``Validator`` (a compiled schema), ``compile_schema`` and the cache keyed by the schema.

Contract:

* ``compile_schema(schema)`` returns a ``Validator`` or raises ``InvalidSchema`` (its
  subclasses ``UnsupportedDialect``, ``UnresolvableRef``) or ``LimitExceeded``. It never fetches
  anything: a ``$ref`` outside the document is an ``UnresolvableRef`` unless ``resolver`` is
  given.
* A ``Validator`` is immutable and may be shared; each validation has its own budget.
  ``is_valid`` stops at the first problem; ``failures`` lists them all (one per failing
  keyword, the failures inside ``anyOf``/``oneOf``/``not``/``if`` summarised by that keyword);
  ``validate`` raises ``ValidationFailed``. All three raise ``LimitExceeded`` when the instance
  is too large or too deep, or the step budget runs out, and never return a verdict then.
* Schemas are values: compile, then do not mutate the schema you compiled (the model's
  classes are frozen; treat their schema dicts the same way). The cache finds a schema object
  it has seen by identity first; otherwise it maps the schema's canonical JSON text (keys
  sorted; made after the size walk), the limits and the
  ``formats`` flag to the compiled validator; the least recently added entry goes first when
  it is full. A schema with a resolver is never cached (the resolver's answers may change).
  Failed compilations are not cached.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final

import orjson
from attrs import frozen

from ._compile import compile_document
from ._errors import Failure, ValidationFailed
from ._limits import DEFAULT_LIMITS, Limits, check_instance_size, check_schema_size
from ._nodes import Ctx, Node
from ._refs import RemoteResolver

__all__ = ["DEFAULT_CACHE", "SchemaCache", "Validator", "compile_schema"]


@frozen(kw_only=True)
class Validator:
    """A compiled schema: validate instances against it as many times as needed."""

    schema: Mapping[str, Any] | bool
    dialect: str
    limits: Limits
    formats: bool
    _root: Node

    def _ctx(self, instance: Any) -> Ctx:
        check_instance_size(instance, self.limits)
        return Ctx(self.limits.max_steps, self.limits.max_eval_depth)

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` conforms (``LimitExceeded`` if a bound is hit first)."""
        return self._root.check(instance, (), self._ctx(instance), None)

    def failures(self, instance: Any) -> list[Failure]:
        """Every way ``instance`` fails the schema; an empty list when it conforms."""
        errs: list[Failure] = []
        self._root.check(instance, (), self._ctx(instance), errs)
        return errs

    def validate(self, instance: Any) -> None:
        """Raise ``ValidationFailed`` (listing the failures) unless ``instance`` conforms."""
        if not self.is_valid(instance):
            raise ValidationFailed(self.failures(instance))


class SchemaCache:
    """Compiled validators keyed by schema content (see the module docstring).

    Safe to share between threads: at worst a schema is compiled twice.
    """

    def __init__(self, maxsize: int = 256):
        self.maxsize = maxsize
        self._entries: dict[tuple[bytes, Limits, bool], Validator] = {}
        # The same schema object asked again (a Tool's inputSchema, call after call): found
        # by identity, without the size walk and the serialisation. The entry holds the
        # schema, so its id cannot be reused while the entry lives.
        self._by_id: dict[tuple[int, int, bool], Validator] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._by_id.clear()

    def get(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        limits: Limits = DEFAULT_LIMITS,
        formats: bool = False,
    ) -> Validator:
        """The validator of ``schema``, compiled on first use."""
        found = self._by_id.get((id(schema), id(limits), formats))
        if found is not None and found.schema is schema and found.limits is limits:
            return found
        # The size walk comes first: serialising a schema of shared sub-dicts (2**40 logical
        # values in 40 dicts) to make the key would take forever.
        check_schema_size(schema, limits)
        try:
            text = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            # Not serialisable (too deep, non-string keys...): compiling says what is wrong.
            return _compile(schema, limits, formats, None)
        key = (text, limits, formats)
        validator = self._entries.get(key)
        if validator is None:
            validator = _compile(schema, limits, formats, None)
            self._entries[key] = validator
        if len(self._by_id) >= self.maxsize:
            with contextlib.suppress(StopIteration, KeyError, RuntimeError):  # emptied meanwhile
                del self._by_id[next(iter(self._by_id))]
        if len(self._entries) > self.maxsize:
            with contextlib.suppress(StopIteration, KeyError, RuntimeError):
                del self._entries[next(iter(self._entries))]
        if validator.schema is schema and validator.limits is limits:
            self._by_id[(id(schema), id(limits), formats)] = validator
        return validator


#: The cache ``compile_schema`` uses unless told otherwise.
DEFAULT_CACHE: Final = SchemaCache()

_UNSET: Any = object()


def _compile(
    schema: Any, limits: Limits, formats: bool, resolver: RemoteResolver | None
) -> Validator:
    root, dialect = compile_document(schema, limits=limits, formats=formats, resolver=resolver)
    return Validator(schema=schema, dialect=dialect, limits=limits, formats=formats, root=root)


def compile_schema(
    schema: Mapping[str, Any] | bool,
    *,
    limits: Limits = DEFAULT_LIMITS,
    formats: bool = False,
    resolver: RemoteResolver | None = None,
    cache: SchemaCache | None = _UNSET,
) -> Validator:
    """Compile ``schema`` (cached in ``DEFAULT_CACHE`` unless ``cache`` says otherwise).

    ``formats=True`` makes ``format`` an assertion for the formats listed in the docs (it is an
    annotation by default, as 2020-12 says). ``resolver``, off by default, is asked for any
    ``$ref`` document outside this one; see the docs for what it must guard against.
    ``cache=None`` compiles afresh.
    """
    if resolver is not None:
        return _compile(schema, limits, formats, resolver)
    if cache is _UNSET:
        cache = DEFAULT_CACHE
    if cache is None:
        return _compile(schema, limits, formats, None)
    return cache.get(schema, limits=limits, formats=formats)

"""The dialects this validator implements (SCHEMA-01..04) and where each keeps its subschemas.

2020-12 is the default when ``$schema`` is absent. 2019-09 and draft-07 are also implemented;
any other ``$schema`` value is refused with ``UnsupportedDialect`` naming it.

Differences honoured: draft-07 ignores the siblings of ``$ref``, uses ``definitions``,
``dependencies``, array-form ``items`` with ``additionalItems``, and ``$id: "#name"`` anchors;
it has no ``$anchor``, ``$defs``, ``dependentRequired``/``dependentSchemas``,
``unevaluated*``, ``prefixItems``, ``minContains``/``maxContains`` (those are unknown keywords
there, kept as annotations). 2019-09 has array-form ``items``/``additionalItems`` and no
``prefixItems``; its dynamic reference is ``$recursiveRef``/``$recursiveAnchor`` where
2020-12 has ``$dynamicRef``/``$dynamicAnchor`` (both implemented, see ``_dynamic``).
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

__all__ = ["DIALECTS", "DRAFT_07", "DRAFT_2019_09", "DRAFT_2020_12", "Dialect", "dialect_named"]


@frozen
class Dialect:
    """A supported dialect: its name and the keywords holding subschemas."""

    name: str
    single: frozenset[str]  # keywords whose value is one subschema
    lists: frozenset[str]  # keywords whose value is an array of subschemas
    maps: frozenset[str]  # keywords whose value maps names to subschemas
    ref_overrides: bool  # draft-07: $ref ignores its siblings


_COMMON_SINGLE = {
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "propertyNames",
    "contains",
    "items",
}

DRAFT_2020_12: Final = Dialect(
    "2020-12",
    frozenset(_COMMON_SINGLE | {"unevaluatedItems", "unevaluatedProperties"}),
    frozenset({"allOf", "anyOf", "oneOf", "prefixItems"}),
    frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}),
    False,
)
DRAFT_2019_09: Final = Dialect(
    "2019-09",
    frozenset(_COMMON_SINGLE | {"unevaluatedItems", "unevaluatedProperties", "additionalItems"}),
    frozenset({"allOf", "anyOf", "oneOf"}),
    frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}),
    False,
)
DRAFT_07: Final = Dialect(
    "draft-07",
    frozenset(_COMMON_SINGLE | {"additionalItems"}),
    frozenset({"allOf", "anyOf", "oneOf"}),
    frozenset({"properties", "patternProperties", "definitions", "dependencies"}),
    True,
)

DIALECTS: Final = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "https://json-schema.org/draft/2019-09/schema": DRAFT_2019_09,
    "http://json-schema.org/draft-07/schema": DRAFT_07,
}


def dialect_named(uri: str) -> Dialect | None:
    """The dialect a ``$schema`` value names (an empty fragment ``#`` is allowed), if supported."""
    return DIALECTS.get(uri[:-1] if uri.endswith("#") else uri)

"""Resource bounds (SCHEMA-09) and the linear pre-walks that enforce the size bounds.

Every bound is an attribute of ``Limits``; ``LimitExceeded.bound`` names the one that was hit.
The walks are iterative (no recursion, whatever the nesting) and stop as soon as a bound is
crossed, so a schema built from shared sub-dicts (logically exponential) costs at most the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from ._errors import LimitExceeded

__all__ = ["DEFAULT_LIMITS", "Limits", "check_instance_size", "check_schema_size"]


@frozen(kw_only=True)
class Limits:
    """Bounds on schemas and instances; the defaults suit tool arguments and results.

    Schema (checked when compiling):

    * ``max_schema_values`` (10 000): JSON values in the whole schema document, ``enum`` and
      ``const`` members included.
    * ``max_schema_nesting`` (64): JSON nesting depth of the schema document.
    * ``max_schema_depth`` (32): nesting of subschemas within subschemas.
    * ``max_subschemas`` (2 000): subschemas compiled, those reached through ``$ref`` included.
    * ``max_pattern_length`` (1 000): characters of one ``pattern``/``patternProperties`` regex.

    Instance (checked when validating):

    * ``max_instance_values`` (100 000) and ``max_instance_depth`` (64): JSON values in the
      instance and its nesting depth, checked by a walk before validation starts.
    * ``max_pattern_subject`` (10 000): characters of a string matched against a regex.
    * ``max_regex_work`` (10 000 000): the worst-case work of one regex match, from which a
      smaller per-regex bound on the string length is derived (see ``_regex``).
    * ``max_steps`` (200 000): the per-validation budget, counted (no clock): one step per
      subschema applied to a value, plus one per ``enum`` member compared, per pair of items
      compared by ``uniqueItems`` and per 100 characters given to a regex.
    * ``max_eval_depth`` (200): subschema evaluations nested inside one another at run time
      (``$ref`` recursion included), which keeps validation far from Python's recursion limit.
    """

    max_schema_values: int = 10_000
    max_schema_nesting: int = 64
    max_schema_depth: int = 32
    max_subschemas: int = 2_000
    max_pattern_length: int = 1_000
    max_instance_values: int = 100_000
    max_instance_depth: int = 64
    max_pattern_subject: int = 10_000
    max_regex_work: int = 10_000_000
    max_steps: int = 200_000
    max_eval_depth: int = 200


DEFAULT_LIMITS = Limits()


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_container(value: Any) -> bool:
    t = type(value)
    if t is dict or t is list:
        return True
    return t not in _SCALARS and isinstance(value, (Mapping, list, tuple))


def _walk(value: Any, max_values: int, max_depth: int, names: tuple[str, str], what: str) -> None:
    """Level by level: ``count`` values seen so far, ``level`` the containers at ``depth``."""
    count = 1
    level = [value] if _is_container(value) else []
    depth = 1
    while level:
        below: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, Mapping) else item
            count += len(children)
            if count > max_values:
                raise LimitExceeded(names[0], max_values, f"the number of values in the {what}")
            for child in children:
                t = type(child)
                if t is dict or t is list or (t not in _SCALARS and _is_container(child)):
                    below.append(child)
        if below and depth >= max_depth:
            raise LimitExceeded(names[1], max_depth, f"the nesting depth of the {what}")
        level = below
        depth += 1


def check_schema_size(schema: Any, limits: Limits) -> None:
    """Raise ``LimitExceeded`` when the schema document has too many values or is too deep."""
    _walk(
        schema,
        limits.max_schema_values,
        limits.max_schema_nesting,
        ("max_schema_values", "max_schema_nesting"),
        "schema",
    )


def check_instance_size(instance: Any, limits: Limits) -> None:
    """Raise ``LimitExceeded`` when the instance has too many values or is too deep."""
    _walk(
        instance,
        limits.max_instance_values,
        limits.max_instance_depth,
        ("max_instance_values", "max_instance_depth"),
        "instance",
    )

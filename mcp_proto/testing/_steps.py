"""The steps of a script and the rules that match a received message against one.

A script is a list of steps: :class:`Send` (write this message to the
connection under test), :class:`Expect` (the next message the connection
writes must match this) and :class:`Close` (end the input).  Matching is by
JSON value: a subset by default (every expected key present with a matching
value; lists item by item), or equality with ``exact=True``.  Inside an
expected value, :data:`ANY` matches any value, :data:`ABSENT` requires a key
to be missing, and :class:`Match` applies a predicate.  A mismatch raises
``AssertionError`` (never a test framework's own exception) showing the
expected value, the message received, and the first path that differs.

Both the scripted peer (``_script``) and the trace (``_trace``, which turns a
recording into steps) read this module; it imports neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import attrs
import orjson
from attrs import frozen

from .._codec import unstructure

__all__ = [
    "ABSENT",
    "ANY",
    "Close",
    "Expect",
    "Match",
    "Send",
    "Step",
    "assert_matches",
    "describe",
]


@frozen(kw_only=True)
class Match:
    """Matches a value when ``predicate(value)`` is true; ``description`` is shown on failure."""

    predicate: Callable[[Any], bool]
    description: str

    def __repr__(self) -> str:
        return self.description


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


#: Matches any value (the key must be present).
ANY = Match(predicate=lambda _: True, description="ANY")
#: In an expected object: the key must not be present.
ABSENT = _Absent()


def _show(value: Any) -> str:
    try:
        return orjson.dumps(value, default=repr).decode()
    except TypeError:
        return repr(value)


def _json(value: Any) -> Any:
    return unstructure(value) if attrs.has(type(value)) else value


def _numbers_equal(actual: Any, expected: Any) -> bool:
    kinds = (int, float)
    return (
        type(actual) in kinds and type(expected) in kinds and actual == expected  # 1 == 1.0
    )


def _difference(actual: Any, expected: Any, exact: bool, path: str) -> str | None:
    """Where ``actual`` first fails to match ``expected``, or ``None``."""
    here = path or "/"
    if isinstance(expected, Match):
        return None if expected.predicate(actual) else f"{here}: {_show(actual)} is not {expected}"
    if type(expected) is dict:
        if type(actual) is not dict:
            return f"{here}: expected an object, got {_show(actual)}"
        for key, want in expected.items():
            where = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if want is ABSENT:
                if key in actual:
                    return f"{where}: expected no such key, got {_show(actual[key])}"
            elif key not in actual:
                return f"{where}: missing"
            else:
                found = _difference(actual[key], want, exact, where)
                if found is not None:
                    return found
        extra = [k for k in actual if k not in expected] if exact else []
        return f"{here}: unexpected key(s) {extra}" if extra else None
    if type(expected) is list:
        if type(actual) is not list:
            return f"{here}: expected an array, got {_show(actual)}"
        if len(actual) != len(expected):
            return f"{here}: expected {len(expected)} item(s), got {len(actual)}"
        for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
            found = _difference(got, want, exact, f"{path}/{i}")
            if found is not None:
                return found
        return None
    same = type(actual) is type(expected) and actual == expected
    if same or _numbers_equal(actual, expected):
        return None
    return f"{here}: expected {_show(expected)}, got {_show(actual)}"


def assert_matches(actual: Any, expected: Any, *, exact: bool = False) -> None:
    """Raise ``AssertionError`` unless the JSON value ``actual`` matches ``expected``."""
    found = _difference(actual, _json(expected), exact, "")
    if found is not None:
        raise AssertionError(
            f"the message does not match\n  expected: {_show(_json(expected))}"
            f"\n  got:      {_show(actual)}\n  at {found}"
        )


@frozen(kw_only=True)
class Send:
    """Write ``message`` to the connection under test.

    ``message`` is a JSON value or a typed message (sent as one line), or
    ``bytes`` written exactly as given (for broken input: include the newline).
    """

    message: Any

    def data(self) -> bytes:
        if isinstance(self.message, bytes):
            return self.message
        return orjson.dumps(_json(self.message)) + b"\n"


@frozen(kw_only=True)
class Expect:
    """The next message the connection writes must match ``message`` (see the module docs)."""

    message: Any
    exact: bool = False


@frozen(kw_only=True)
class Close:
    """End the input of the connection under test (``receive_data(b"")``)."""


Step: TypeAlias = Send | Expect | Close


def describe(step: Step) -> str:
    """A step in words, for the scripted peer's failure messages."""
    if isinstance(step, Send):
        raw = step.message
        shown = repr(raw) if isinstance(raw, bytes) else _show(_json(raw))
        return f"send {shown}"
    if isinstance(step, Expect):
        return f"expect {_show(_json(step.message))}"
    return "close"

"""A scripted peer: plays one side of an exchange and asserts on what it receives.

A script is a list of steps: :class:`Send` (write this message to the
connection under test), :class:`Expect` (the next message the connection
writes must match this) and :class:`Close` (end the input).  Matching is by
JSON value: a subset by default (every expected key present with a matching
value; lists item by item), or equality with ``exact=True``.  Inside an
expected value, :data:`ANY` matches any value, :data:`ABSENT` requires a key
to be missing, and :class:`Match` applies a predicate.  A mismatch raises
``AssertionError`` (never a test framework's own exception) showing the step,
the expected value, the message received, and the first path that differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

import attrs
import orjson
from attrs import frozen

from .._codec import unstructure
from .._connection import NEED_DATA, ConnectionClosed, Event
from ._trace import Sender, Trace, other_side

__all__ = [
    "ABSENT",
    "ANY",
    "Close",
    "Expect",
    "Match",
    "ScriptedPeer",
    "Send",
    "Step",
    "assert_matches",
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


class ScriptedPeer:
    """Plays ``role`` (``"client"`` or ``"server"``) from a script, against a real connection.

    Sans-I/O like the connections: :meth:`data_to_send` gives the chunks to
    feed the connection under test (``b""`` for :class:`Close`), and
    :meth:`receive_data` takes what the connection wrote and checks each line
    against the next :class:`Expect` step.  :meth:`run` does the loop for you.
    ``trace`` records everything that crossed.
    """

    def __init__(self, steps: Iterable[Step], *, role: Sender) -> None:
        other_side(role)
        self.role = role
        self.steps: list[Step] = list(steps)
        self.position = 0
        self.trace = Trace()
        self._buffer = b""

    @property
    def done(self) -> bool:
        """Whether every step has been played."""
        return self.position >= len(self.steps)

    def _where(self) -> str:
        return f"step {self.position + 1} of {len(self.steps)}"

    def data_to_send(self) -> list[bytes]:
        """The chunks of the :class:`Send` and :class:`Close` steps now due."""
        out: list[bytes] = []
        while not self.done and not isinstance(self.steps[self.position], Expect):
            step = self.steps[self.position]
            self.position += 1
            if isinstance(step, Close):
                out.append(b"")
                break
            assert isinstance(step, Send)
            data = step.data()
            self.trace.record(self.role, data)
            out.append(data)
        return out

    def receive_data(self, data: bytes) -> None:
        """Check what the connection wrote; ``AssertionError`` on the first mismatch."""
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self._check(line)

    def _check(self, line: bytes) -> None:
        self.trace.record(other_side(self.role), line)
        text = line.decode("utf-8", "replace")
        if self.done:
            raise AssertionError(f"the script is over, but the connection sent {text}")
        step = self.steps[self.position]
        if not isinstance(step, Expect):
            raise AssertionError(
                f"{self._where()}: the script sends next ({_describe(step)}), "
                f"but the connection sent {text}"
            )
        try:
            actual = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise AssertionError(
                f"{self._where()}: the connection sent invalid JSON: {text}"
            ) from None
        try:
            assert_matches(actual, step.message, exact=step.exact)
        except AssertionError as e:
            raise AssertionError(f"{self._where()}: {e}") from None
        self.position += 1

    def assert_done(self) -> None:
        """``AssertionError`` unless every step has been played."""
        if self._buffer.strip():
            raise AssertionError(f"the connection left an unfinished line: {self._buffer!r}")
        if not self.done:
            step = self.steps[self.position]
            raise AssertionError(
                f"{self._where()} was not played: {_describe(step)} "
                "(the connection sent nothing more)"
            )

    def run(
        self,
        conn: Any,
        respond: Callable[[Event], Iterable[Any] | None] | None = None,
        *,
        start: Iterable[Any] = (),
    ) -> list[Event]:
        """Play the whole script against ``conn``; return the events ``conn`` produced.

        ``start`` are events ``conn`` sends first (a client's first request).
        ``respond(event)`` plays the application under test: it gets each
        event and returns the events to send back (``None`` for none); an
        ``InvalidMessage`` is answered only if ``respond`` returns it.  Ends
        with :meth:`assert_done`.
        """
        seen: list[Event] = []
        for event in start:
            self.receive_data(conn.send(event))
        while True:
            chunks = self.data_to_send()
            for chunk in chunks:
                conn.receive_data(chunk)
            produced = False
            while (event := conn.next_event()) is not NEED_DATA:
                seen.append(event)
                produced = True
                for answer in (respond(event) if respond is not None else None) or ():
                    self.receive_data(conn.send(answer))
                if isinstance(event, ConnectionClosed):
                    break
            if self.done or (not chunks and not produced) or b"" in chunks:
                break
        self.assert_done()
        return seen


def _describe(step: Step) -> str:
    if isinstance(step, Send):
        raw = step.message
        shown = repr(raw) if isinstance(raw, bytes) else _show(_json(raw))
        return f"send {shown}"
    if isinstance(step, Expect):
        return f"expect {_show(_json(step.message))}"
    return "close"

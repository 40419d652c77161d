"""A scripted peer: plays one side of an exchange and asserts on what it receives.

The script's steps and the matching rules are in ``_steps`` (:class:`Send`,
:class:`Expect`, :class:`Close`, :func:`assert_matches`).  A mismatch raises
``AssertionError`` (never a test framework's own exception) naming the step,
the expected value, the message received, and the first path that differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .._connection import NEED_DATA, PAUSED, ConnectionClosed, Event
from ._steps import Close, Expect, Send, Step, assert_matches, describe
from ._trace import Sender, Trace, other_side

__all__ = ["ScriptedPeer"]


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
                f"{self._where()}: the script sends next ({describe(step)}), "
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
                f"{self._where()} was not played: {describe(step)} "
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
            while (event := conn.next_event()) is not NEED_DATA and event is not PAUSED:
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

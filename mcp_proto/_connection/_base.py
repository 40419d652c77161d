"""What the server and client connections share: input, the event loop, output.

Input comes either as bytes of a newline-delimited stream (``receive_data``)
or as whole messages from a transport that frames them itself
(``receive_message``).  ``next_event`` hands out one event at a time, or
:data:`NEED_DATA`, or :data:`PAUSED` while it holds a message it may not act on
yet (a server at its ``max_in_flight``).  Output is returned, never buffered: ``send(event)`` gives
the bytes to write and ``send_message(event)`` the same messages as JSON
values.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeAlias, TypeVar

import orjson
from attrs import frozen

from .._codec import DEFAULT_MAX_DEPTH, Message, loads, message_from_json, unstructure
from .._errors import DecodeError, EncodeError, RemoteProtocolError
from ._events import NEED_DATA, PAUSED, ConnectionClosed, Event
from ._framing import DEFAULT_MAX_MESSAGE_SIZE, LineBuffer
from ._requests import Tombstones

__all__ = ["UNROUTED", "Commit", "Router", "Statistics", "StreamConnection"]

Commit: TypeAlias = Callable[[], None]
#: what a router returns for a message it leaves to the connection's own path
UNROUTED: Any = object()
#: looks at each parsed message first: an event, ``None`` (dropped), :data:`PAUSED` (held:
#: offered to ``_on_message`` again, as the parsed JSON) or :data:`UNROUTED`
Router: TypeAlias = Callable[[Any], Any]


@frozen(kw_only=True)
class Statistics:
    """Counters for introspection (trio's ``statistics()`` convention)."""

    in_flight: int
    subscriptions: int
    #: sends dropped because the request had been cancelled (STDIO-13)
    dropped_sends: int
    #: received messages dropped silently (late responses, stray notifications)
    dropped_messages: int
    buffered_bytes: int


#: the events one role's connection hands over (ServerEvent, ClientEvent)
E = TypeVar("E", bound=Event)


class StreamConnection(Generic[E]):
    """Base of :class:`ServerConnection` and :class:`ClientConnection`."""

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        tombstones: int = 4096,
    ) -> None:
        self._lines = LineBuffer(max_message_size)
        #: whole messages fed by receive_message; made on first use (an empty deque is
        #: 600 bytes, and most connections are fed bytes only)
        self._inbox: deque[Any] | None = None
        self._max_depth = max_depth
        self._error: RemoteProtocolError | None = None
        self._closed: ConnectionClosed | None = None
        self._gone = Tombstones(tombstones)
        #: a decoded message ``_on_message`` paused on (or a parsed one the router paused
        #: on): acted on first once it may be
        self._held: Any = None
        #: see :data:`Router`; ``None``: every message takes the connection's own path
        self._router: Router | None = None
        self._dropped_sends = 0
        self._dropped_messages = 0

    # -- input -------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the peer; ``b""`` means the peer closed its side.

        Raises ``RuntimeError`` for data after the end of input.
        """
        self._lines.feed(data)

    def receive_message(self, message: Message | dict[str, Any] | bytes | str) -> None:
        """Feed one whole message from a transport that frames messages itself.

        Accepts the JSON text of one message, its parsed JSON value, or a typed
        message.  Invalid ones become :class:`InvalidMessage` events like
        invalid lines do.
        """
        if self._lines.eof:
            raise RuntimeError("received a message after the end of input")
        if self._inbox is None:
            self._inbox = deque()
        self._inbox.append(message)

    def next_event(self) -> E | ConnectionClosed | type[NEED_DATA] | type[PAUSED]:
        """The next event, or :data:`NEED_DATA` when more input is needed.

        :data:`PAUSED`: the next message may not be acted on yet (a request past a
        server's ``max_in_flight``); the caller ends a request first (sends its
        response), then calls again.  Until then every call returns ``PAUSED``, and
        nothing behind the held message is read.  After the end of input (and once
        every buffered message has been handed out) it returns
        :class:`ConnectionClosed`, every time it is called.  Raises
        :class:`RemoteProtocolError` when the framing is lost, and keeps raising it.
        """
        if self._error is not None:
            raise self._error
        held = self._held
        if held is not None:
            event = self._on_message(held)
            if event is PAUSED:
                return PAUSED
            self._held = None
            # Only a request is held, and a held request, once admitted, is a Request event or
            # a refusal to send: never dropped.
            assert event is not None
            return event
        while True:
            inbox = self._inbox
            if inbox:
                item = inbox.popleft()
                if not inbox:  # given back once empty: an idle HTTP session keeps none
                    self._inbox = None
            else:
                try:
                    item = self._lines.next_line()
                except RemoteProtocolError as e:
                    self._error = e
                    raise
                if item is None:
                    if not self._lines.eof:
                        return NEED_DATA
                    if self._closed is None:
                        self._closed = self._on_close()
                    return self._closed
            event = self._handle_item(item)
            if event is not None:
                return event

    def _handle_item(self, item: Any) -> E | type[PAUSED] | None:
        obj: Any = item
        try:
            if isinstance(item, bytes | bytearray | memoryview | str):
                obj = loads(item, self._max_depth)
            elif not isinstance(item, dict):
                obj = unstructure(item)
            router = self._router
            if router is not None:
                routed = router(obj)
                if routed is not UNROUTED:
                    if routed is PAUSED:
                        self._held = obj
                    return routed  # type: ignore[no-any-return]
            message = message_from_json(obj)
        except DecodeError as e:
            return self._on_invalid(e, obj)
        event = self._on_message(message)
        if event is PAUSED:
            self._held = message  # decoded once; admitted when a request ends
        return event

    # -- output ------------------------------------------------------------

    def send(self, event: Event) -> bytes:
        """The bytes to write for ``event``: zero or more lines.

        Raises :class:`LocalProtocolError` when the event breaks a rule; the
        connection is then left as it was.
        """
        out, commit = self._prepare(event)
        try:
            data = b"".join([orjson.dumps(m) + b"\n" for m in out])
        except (orjson.JSONEncodeError, TypeError) as e:
            raise EncodeError(f"cannot encode {type(event).__name__}: {e}") from None
        if commit is not None:
            commit()
        return data

    def send_message(self, event: Event) -> list[dict[str, Any]]:
        """Like :meth:`send`, but the messages as JSON values, one per message."""
        out, commit = self._prepare(event)
        if commit is not None:
            commit()
        return out

    def statistics(self) -> Statistics:
        return Statistics(
            in_flight=self._in_flight_count(),
            subscriptions=self._subscription_count(),
            dropped_sends=self._dropped_sends,
            dropped_messages=self._dropped_messages,
            buffered_bytes=len(self._lines),
        )

    # -- for the subclasses ------------------------------------------------

    def _prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        """Check ``event`` and build its messages, changing no state.

        Returns the messages and the state change to apply once they have
        been encoded (so a refused or unencodable event leaves no trace).
        """
        raise NotImplementedError

    def _on_message(self, message: Message) -> E | type[PAUSED] | None:
        """The event for ``message``; ``None`` for one dropped; :data:`PAUSED` to hold it
        (it is offered again, whole, on the next call of :meth:`next_event`)."""
        raise NotImplementedError

    def _on_invalid(self, error: DecodeError, obj: Any) -> E | None:
        raise NotImplementedError

    def _on_close(self) -> ConnectionClosed:
        raise NotImplementedError

    def _in_flight_count(self) -> int:
        raise NotImplementedError

    def _subscription_count(self) -> int:
        raise NotImplementedError

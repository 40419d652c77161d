"""The lifecycle of one request, as data: states, moves, the transition table, a tracker.

Role-agnostic (h11's ``_state.py`` in spirit): a request is in one :class:`State`;
each :class:`Move` (a result, a progress notification, an acknowledgement...) is
looked up in :data:`TRANSITIONS` by ``(state, move)`` and is either a
:class:`Transition` (the next state and the named guards of ``_guards`` to pass on
the way) or a :class:`Refusal` (the rule it breaks, or a quiet drop for a request
that was cancelled: STDIO-13, CANCEL-11/12).  A ``(state, move)`` pair missing from
the table is refused with the rule :data:`DEFAULT_REFUSAL` names for the move, so a
forgotten cell is still a :class:`LocalProtocolError` naming a rule, never a
``KeyError``.

:class:`RequestTracker` holds the live records, their progress tokens, the counts of
calls and listens, and the bounded :class:`Tombstones` of ended ids (which remember
how each ended).  Its :meth:`~RequestTracker.step` checks a move and changes nothing;
:meth:`~RequestTracker.apply` commits it, so a send refused (or unencodable) leaves
no trace.  The state diagram in ``docs/connections.md`` is generated from
:data:`TRANSITIONS` by ``tools/gen_lifecycle.py``.
"""

from __future__ import annotations

import enum
from typing import Any, TypeAlias

from attrs import field, frozen

from .. import types as t
from .._errors import LocalProtocolError
from ._guards import (
    CHANGES,
    GUARDS,
    LOG_LEVELS,
    LOG_RANK,
    RECEIVED,
    Guard,
    GuardConfig,
    matches_filter,
)

__all__ = [
    "CHANGES",
    "DEFAULT_REFUSAL",
    "DROP",
    "LOG_LEVELS",
    "LOG_RANK",
    "TERMINAL",
    "TRANSITIONS",
    "InFlight",
    "Move",
    "Refusal",
    "RequestRecord",
    "RequestTracker",
    "State",
    "Tombstones",
    "Transition",
    "matches_filter",
]


class State(enum.Enum):
    """Where a request is.  The last three are terminal: the id is a tombstone."""

    UNKNOWN = "unknown"  #: never seen, or forgotten (its tombstone evicted)
    OPEN = "open"  #: a call, received (server) or sent (client), not ended
    LISTENING = "listening"  #: a subscriptions/listen, not yet acknowledged
    ACKNOWLEDGED = "acknowledged"  #: a listen after its acknowledgement
    DONE = "done"  #: ended by a result or an error (or a server's end of a listen)
    INPUT_REQUIRED = "input_required"  #: ended by an InputRequiredResult (MRTR-14: new id)
    CANCELLED = "cancelled"  #: ended by the requester's notifications/cancelled

    #: members are singletons: hash by identity, in C (Enum's own hash is Python code,
    #: and every table lookup hashes a state and a move)
    __hash__ = object.__hash__


#: the states of an ended request (kept as tombstones)
TERMINAL = frozenset({State.DONE, State.INPUT_REQUIRED, State.CANCELLED})


class Move(enum.Enum):
    """What can happen to a request, sent or received."""

    REQUEST = "request"  #: a request other than a listen (requester)
    LISTEN = "listen"  #: subscriptions/listen (requester)
    CANCEL = "cancel"  #: notifications/cancelled from the requester
    RESULT = "result"  #: a complete result (responder)
    INPUT_REQUIRED = "input_required"  #: an InputRequiredResult (responder)
    ERROR = "error"  #: an error response with the request's id (responder)
    PROGRESS = "progress"  #: notifications/progress (responder)
    LOG = "log"  #: notifications/message (responder)
    ACK = "ack"  #: notifications/subscriptions/acknowledged (responder)
    CHANGE = "change"  #: a list-changed or resource-updated on a listen (responder)
    NOTE = "note"  #: an extension's notification tied to the request (responder)
    END_LISTEN = "end_listen"  #: notifications/cancelled from the server (CANCEL-02)

    __hash__ = object.__hash__  # as State's


@frozen
class Transition:
    """The move is allowed: the request goes ``to`` once every guard in ``guards`` passed."""

    to: State
    guards: tuple[str, ...] = ()
    #: the guards' functions and rules, looked up once (the send path runs them)
    checks: tuple[tuple[Guard, str], ...] = field(init=False, eq=False, repr=False)
    #: those of them a receiver runs (:data:`~mcp_proto._connection._guards.RECEIVED`)
    received: tuple[tuple[Guard, str], ...] = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(GUARDS[name] for name in self.guards))
        received = tuple(GUARDS[name] for name in self.guards if name in RECEIVED)
        object.__setattr__(self, "received", received)


@frozen
class Refusal:
    """The move is refused for breaking ``rule``; ``why`` says how (``{id}``, ``{method}``
    and ``{what}`` are filled in).  ``drop``: not an error, the move is quietly dropped
    (anything for a cancelled request)."""

    rule: str | None
    why: str = ""
    drop: bool = False


#: dropped quietly: the request was cancelled (STDIO-13, CANCEL-11, CANCEL-12)
DROP = Refusal(None, drop=True)

_IN_FLIGHT = Refusal("BASE-06", "request id {id!r} is already in flight")
_NOT_IN_FLIGHT = Refusal("BASE-09", "cannot send {what}: request {id!r} is not in flight")
_ANSWERED = Refusal("BASE-09", "cannot send {what}: request {id!r} was already answered")
_NOT_A_LISTEN = "request {id!r} is not a subscriptions/listen"
_SCOPED = Refusal("SUB-15", "{what} is request-scoped, not for a listen stream")

_Row: TypeAlias = "dict[Move, Transition | Refusal]"

_ENDED: _Row = {  # a request that ended by a result or an error: what may come after
    **dict.fromkeys(Move, _ANSWERED),
    Move.REQUEST: Transition(State.OPEN),  # the id is reused: its tombstone goes
    Move.LISTEN: Transition(State.LISTENING),
    Move.CANCEL: DROP,  # a cancel that crossed the response (CANCEL-10)
    Move.PROGRESS: Refusal("PROG-06", "progress for request {id!r}, which has ended"),
}
_LIVE: _Row = {  # what every live request shares
    Move.REQUEST: _IN_FLIGHT,
    Move.LISTEN: _IN_FLIGHT,
    Move.CANCEL: Transition(State.CANCELLED),
    Move.ERROR: Transition(State.DONE),
    Move.RESULT: Transition(State.DONE, ("result_type", "cache_fields")),
}
_A_LISTEN: _Row = {  # a listen, acknowledged or not
    **_LIVE,
    Move.INPUT_REQUIRED: Refusal("MRTR-03", "input_required is not allowed on {method}"),
    Move.PROGRESS: _SCOPED,
    Move.LOG: _SCOPED,
    Move.END_LISTEN: Transition(State.DONE),  # CANCEL-02
}

#: (state, move) -> what happens.  The one place the lifecycle is written.
TRANSITIONS: dict[tuple[State, Move], Transition | Refusal] = {
    **dict.fromkeys(((State.UNKNOWN, move) for move in Move), _NOT_IN_FLIGHT),
    (State.UNKNOWN, Move.REQUEST): Transition(State.OPEN),
    (State.UNKNOWN, Move.LISTEN): Transition(State.LISTENING),
    (State.UNKNOWN, Move.CANCEL): DROP,  # unknown: ignored (CANCEL-14)
    (State.UNKNOWN, Move.PROGRESS): Refusal("PROG-06", "no in-flight request {id!r}"),
    **{(State.DONE, move): to for move, to in _ENDED.items()},
    **{(State.INPUT_REQUIRED, move): to for move, to in _ENDED.items()},
    **dict.fromkeys(((State.CANCELLED, move) for move in Move), DROP),
    (State.CANCELLED, Move.REQUEST): Transition(State.OPEN),
    (State.CANCELLED, Move.LISTEN): Transition(State.LISTENING),
    **{(State.OPEN, move): to for move, to in _LIVE.items()},
    (State.OPEN, Move.INPUT_REQUIRED): Transition(
        State.INPUT_REQUIRED, ("mrtr_method", "mrtr_shape", "mrtr_declared")
    ),
    (State.OPEN, Move.PROGRESS): Transition(State.OPEN, ("progress_increases",)),
    (State.OPEN, Move.LOG): Transition(State.OPEN, ("log_requested", "log_level")),
    (State.OPEN, Move.ACK): Refusal("SUB-04", _NOT_A_LISTEN),
    (State.OPEN, Move.CHANGE): Refusal("SUB-08", _NOT_A_LISTEN),
    (State.OPEN, Move.NOTE): Transition(State.OPEN),
    (State.OPEN, Move.END_LISTEN): Refusal("CANCEL-03", _NOT_A_LISTEN),
    **{(State.LISTENING, move): to for move, to in _A_LISTEN.items()},
    (State.LISTENING, Move.ACK): Transition(State.ACKNOWLEDGED, ("ack_subset",)),
    (State.LISTENING, Move.CHANGE): Refusal("SUB-04", "listen {id!r} must be acknowledged first"),
    (State.LISTENING, Move.NOTE): Transition(State.LISTENING),
    **{(State.ACKNOWLEDGED, move): to for move, to in _A_LISTEN.items()},
    (State.ACKNOWLEDGED, Move.ACK): Refusal("SUB-04", "listen {id!r} is already acknowledged"),
    (State.ACKNOWLEDGED, Move.CHANGE): Transition(State.ACKNOWLEDGED, ("change_in_filter",)),
    (State.ACKNOWLEDGED, Move.NOTE): Transition(State.ACKNOWLEDGED),
}

#: the rule a move breaks when it comes at a time the table does not list
DEFAULT_REFUSAL: dict[Move, str] = {
    Move.REQUEST: "BASE-06",
    Move.LISTEN: "BASE-06",
    Move.CANCEL: "CANCEL-08",
    Move.RESULT: "BASE-09",
    Move.INPUT_REQUIRED: "BASE-09",
    Move.ERROR: "BASE-09",
    Move.NOTE: "BASE-09",
    Move.PROGRESS: "PROG-06",
    Move.LOG: "LOG-05",
    Move.ACK: "SUB-04",
    Move.CHANGE: "SUB-09",
    Move.END_LISTEN: "CANCEL-03",
}


class RequestRecord:
    """One live request: what either role tracks for it.

    ``listen`` holds the ``SubscriptionFilter`` a ``subscriptions/listen`` asked for
    (``None`` for other methods); ``honoured`` the acknowledged one.  ``sent`` is the
    requester's own copy of what it sent (the client's ``Request`` event), ``None`` on
    the responder.  ``meta`` may be ``None`` (an extension request whose ``_meta`` the
    client sends as a dict): no capabilities, token or log level then.
    """

    __slots__ = (
        "capabilities",
        "honoured",
        "id",
        "last_progress",
        "listen",
        "log_rank",
        "method",
        "progress_token",
        "sent",
        "state",
    )

    def __init__(
        self,
        id: t.RequestId,
        method: str,
        meta: t.RequestMetaObject | None,
        params: Any,
        sent: Any = None,
    ) -> None:
        self.id = id
        self.method = method
        self.capabilities: t.ClientCapabilities | None = None
        self.progress_token: t.ProgressToken | None = None
        self.log_rank: int | None = None
        if meta is not None:
            self.capabilities = meta.client_capabilities
            self.progress_token = meta.progress_token
            if meta.log_level is not None:
                self.log_rank = LOG_RANK[meta.log_level]
        self.last_progress: float | None = None
        self.listen: t.SubscriptionFilter | None = (
            params.notifications if params is not None else None
        )
        self.honoured: t.SubscriptionFilter | None = None
        self.state = State.LISTENING if self.listen is not None else State.OPEN
        self.sent = sent


#: the name this record had before the lifecycle was a table (``mcp_proto.InFlight``)
InFlight = RequestRecord


class Tombstones:
    """A bounded record of ids that are over and how each ended, oldest forgotten first."""

    __slots__ = ("_ids", "_limit")

    def __init__(self, limit: int) -> None:
        self._ids: dict[t.RequestId, State] = {}
        self._limit = limit

    def add(self, id: t.RequestId, state: State) -> None:
        ids = self._ids
        ids.pop(id, None)
        ids[id] = state
        if len(ids) > self._limit:
            del ids[next(iter(ids))]

    def get(self, id: t.RequestId) -> State | None:
        """How ``id`` ended, or ``None``: unknown (or forgotten)."""
        return self._ids.get(id)

    def discard(self, id: t.RequestId) -> None:
        self._ids.pop(id, None)

    def __len__(self) -> int:
        return len(self._ids)


def _missing(state: State, move: Move) -> Refusal:
    """A pair the table does not list: refused with the rule the move breaks."""
    why = f"{move.value} is not allowed on request {{id!r}}, which is {state.value}"
    return Refusal(DEFAULT_REFUSAL[move], why)


class RequestTracker:
    """The requests of one connection, live and ended, moved only by the table."""

    __slots__ = ("by_token", "calls", "config", "gone", "listens", "live")

    def __init__(self, gone: Tombstones, config: GuardConfig | None = None) -> None:
        self.live: dict[t.RequestId, RequestRecord] = {}
        self.by_token: dict[t.ProgressToken, RequestRecord] = {}
        self.gone = gone
        self.config = config if config is not None else GuardConfig()
        self.calls = self.listens = 0

    def state(self, id: t.RequestId) -> State:
        record = self.live.get(id)
        if record is not None:
            return record.state
        return self.gone.get(id) or State.UNKNOWN

    def entry(self, id: t.RequestId, move: Move) -> Transition | Refusal:
        """The table's answer for ``move`` on request ``id`` (the default refusal if none)."""
        record = self.live.get(id)
        state = record.state if record is not None else self.gone.get(id) or State.UNKNOWN
        found = TRANSITIONS.get((state, move))
        return found if found is not None else _missing(state, move)

    def check(
        self,
        move: Move,
        id: t.RequestId,
        value: Any = None,
        *,
        received: bool = False,
        what: str = "",
    ) -> tuple[RequestRecord, State] | Refusal:
        """What ``move`` on request ``id`` does: its record and next state, or the
        :class:`Refusal` (the table's with its ``why`` filled in, or a failed guard's).
        Changes nothing: :meth:`apply` commits.

        ``received``: the move came from the peer, so only the guards a receiver acts
        on run (:data:`~mcp_proto._connection._guards.RECEIVED`); the others are the
        sender's duty.  ``what`` names the move in a refusal (its value by default).
        """
        record = self.live.get(id)
        state = record.state if record is not None else self.gone.get(id) or State.UNKNOWN
        found = TRANSITIONS.get((state, move)) or _missing(state, move)
        if type(found) is Refusal:
            if found.drop:
                return found
            method = record.method if record is not None else ""
            why = found.why.format(id=id, method=method, what=what or move.value)
            return Refusal(found.rule, why)
        assert record is not None and type(found) is Transition  # only live states move on
        for guard, rule in found.received if received else found.checks:
            failed = guard(record, value, self.config)
            if failed is not None:
                return Refusal(rule, failed)
        return record, found.to

    def step(
        self, move: Move, id: t.RequestId, value: Any = None, *, what: str = ""
    ) -> tuple[RequestRecord, State] | None:
        """Check ``move`` on live request ``id`` before sending it: its record and next
        state, or ``None`` when it is dropped.  Raises :class:`LocalProtocolError`
        naming the rule broken (by the table or a guard).  Changes nothing:
        :meth:`apply` commits."""
        checked = self.check(move, id, value, what=what)
        if not isinstance(checked, Refusal):
            return checked
        if checked.drop:
            return None
        raise LocalProtocolError(checked.why, rule=checked.rule)

    def open(self, record: RequestRecord) -> None:
        """Track a request just sent or received (``record.state`` is its first state)."""
        self.live[record.id] = record
        self.gone.discard(record.id)
        if record.state is State.LISTENING:
            self.listens += 1
        else:
            self.calls += 1
        if record.progress_token is not None:
            self.by_token[record.progress_token] = record

    def apply(self, record: RequestRecord, to: State) -> None:
        """Move ``record`` to ``to``; a terminal state ends it (its id becomes a tombstone)."""
        if to not in TERMINAL:
            record.state = to
            return
        del self.live[record.id]
        self.gone.add(record.id, to)
        if record.listen is not None:
            self.listens -= 1
        else:
            self.calls -= 1
        if record.progress_token is not None:
            self.by_token.pop(record.progress_token, None)
        record.state = to

    def acknowledged(self) -> list[RequestRecord]:
        """The listens that are acknowledged, in the order they were opened."""
        return [r for r in self.live.values() if r.state is State.ACKNOWLEDGED]

"""The request lifecycle as data: what may happen to a request, and when.

Both connection roles move their requests by one table, :data:`TRANSITIONS`:
``(State, Move) -> Transition | Refusal``.  A :class:`Transition` names the next
state and the guards (:data:`GUARDS`: name -> (function, rule id)) a move must
pass; a :class:`Refusal` names the rule the move breaks, or is :data:`DROP` (a
request that was cancelled: anything for it is dropped quietly).
:class:`RequestTracker` is what a connection keeps: the live
:class:`RequestRecord`\\ s, the ended ids as bounded :class:`Tombstones`.

For tools and tests (``tools/gen_lifecycle.py`` draws the table into
``docs/connections.md``) and for embedders who want to know a request's state
(``ServerConnection.request_state``, ``ClientConnection.request_state``).  What a
client receives is looked up in the same table; of a move's guards it runs those in
:data:`RECEIVED` (the rest are the sender's duty), and it keeps of an acknowledgement
only what it asked for (:func:`narrowed`)::

    >>> from mcp_proto.lifecycle import TRANSITIONS, Move, State
    >>> TRANSITIONS[(State.LISTENING, Move.ACK)]
    Transition(to=<State.ACKNOWLEDGED: 'acknowledged'>, guards=('ack_subset',))
    >>> TRANSITIONS[(State.LISTENING, Move.CHANGE)].rule
    'SUB-04'
"""

from ._connection import (
    DEFAULT_REFUSAL,
    DROP,
    GUARDS,
    RECEIVED,
    TERMINAL,
    TRANSITIONS,
    GuardConfig,
    Move,
    Refusal,
    RequestRecord,
    RequestTracker,
    State,
    Tombstones,
    Transition,
    narrowed,
)

__all__ = [
    "DEFAULT_REFUSAL",
    "DROP",
    "GUARDS",
    "TERMINAL",
    "TRANSITIONS",
    "GuardConfig",
    "Move",
    "RECEIVED",
    "Refusal",
    "RequestRecord",
    "RequestTracker",
    "State",
    "Tombstones",
    "Transition",
    "narrowed",
]

"""Helpers for your own low-level tests of code built on ``mcp_proto``.

* :class:`ConnectionPair`: a :class:`~mcp_proto.ClientConnection` and a
  :class:`~mcp_proto.ServerConnection` wired back to back in memory, over
  bytes (so the framing is exercised), optionally delivered in small chunks;
  :func:`drain` collects the events a connection has ready.
* :class:`ScriptedPeer`: plays one side of an exchange from a script of
  :class:`Send`, :class:`Expect` and :class:`Close` steps against a real
  connection of either role, asserting on every message it receives.
  :func:`assert_matches`, :data:`ANY`, :data:`ABSENT` and :class:`Match` are
  the matching rules of :class:`Expect`.
* :class:`Trace`: the messages that crossed, with their direction; saved and
  loaded as JSON text lines, rendered for reading, turned into a script.

Failures raise ``AssertionError``; nothing here needs a test framework, so
these helpers work with pytest, unittest or plain scripts.  See
``docs/testing.md``.

May import: ``mcp_proto.types``, the codec and the connection layers
(``docs/architecture.md``).
"""

from ._pair import ConnectionPair, drain
from ._script import ScriptedPeer
from ._steps import ABSENT, ANY, Close, Expect, Match, Send, Step, assert_matches
from ._trace import Sender, Trace, TraceEntry

__all__ = [
    "ABSENT",
    "ANY",
    "Close",
    "ConnectionPair",
    "Expect",
    "Match",
    "ScriptedPeer",
    "Send",
    "Sender",
    "Step",
    "Trace",
    "TraceEntry",
    "assert_matches",
    "drain",
]

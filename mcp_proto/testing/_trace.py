"""Wire traces: every message that crossed between a client and a server, in order.

A :class:`Trace` records lines as they cross (``record(sender, data)``), saves
them as JSON text lines (one ``{"from": ..., "message": ...}`` object per
message), loads them back, renders them for reading, and turns them into the
steps of a :class:`~mcp_proto.testing.ScriptedPeer`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeAlias

import orjson
from attrs import frozen

from ._steps import Expect, Send, Step

__all__ = ["Sender", "Trace", "TraceEntry"]

Sender: TypeAlias = Literal["client", "server"]
_OTHER: dict[str, Sender] = {"client": "server", "server": "client"}


def other_side(sender: Sender) -> Sender:
    """``"server"`` for ``"client"`` and the reverse; ``ValueError`` for anything else."""
    try:
        return _OTHER[sender]
    except KeyError:
        raise ValueError(f'a sender is "client" or "server", not {sender!r}') from None


@frozen(kw_only=True)
class TraceEntry:
    """One message that crossed the wire.

    ``message`` is its JSON value; ``raw`` holds the line's bytes instead when
    they were not valid JSON (``message`` is then ``None``).
    """

    sender: Sender
    message: Any = None
    raw: bytes | None = None

    @property
    def receiver(self) -> Sender:
        return other_side(self.sender)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this entry in a saved trace."""
        if self.raw is None:
            return {"from": self.sender, "message": self.message}
        try:
            return {"from": self.sender, "raw": self.raw.decode("utf-8")}
        except UnicodeDecodeError:
            return {"from": self.sender, "rawBase64": base64.b64encode(self.raw).decode("ascii")}

    @classmethod
    def from_json(cls, obj: Any) -> TraceEntry:
        """The inverse of :meth:`to_json`; ``ValueError`` for anything else."""
        if type(obj) is not dict or obj.get("from") not in _OTHER:
            raise ValueError(f"not a trace entry: {obj!r}")
        sender: Sender = obj["from"]
        if "message" in obj:
            return cls(sender=sender, message=obj["message"])
        if type(obj.get("raw")) is str:
            return cls(sender=sender, raw=obj["raw"].encode("utf-8"))
        if type(obj.get("rawBase64")) is str:
            return cls(sender=sender, raw=base64.b64decode(obj["rawBase64"], validate=True))
        raise ValueError(f"not a trace entry: {obj!r}")

    def summary(self) -> str:
        """A short description: ``request 1 tools/call``, ``result 1``, ``error 1 -32602``..."""
        msg = self.message
        if self.raw is not None or type(msg) is not dict:
            return "not a JSON object"
        id = msg.get("id")
        if "method" in msg:
            kind = "request" if "id" in msg else "notification"
            return (
                f"{kind} {_id(id)} {msg['method']}" if "id" in msg else f"{kind} {msg['method']}"
            )
        if type(msg.get("result")) is dict:
            kind = msg["result"].get("resultType", "complete")
            return f"result {_id(id)}" + ("" if kind == "complete" else f" {kind}")
        if type(msg.get("error")) is dict:
            return f"error {_id(id)} {msg['error'].get('code')}"
        return "not a message"


def _id(id: Any) -> str:
    try:
        return orjson.dumps(id).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        return str(id)


class Trace:
    """The messages that crossed, in order (a list of :class:`TraceEntry`).

    ``record`` accepts bytes exactly as written to the stream; every
    non-blank line becomes one entry.  ``dumps``/``loads`` save and load the
    JSON text lines form; ``render`` is for people.
    """

    def __init__(self, entries: Iterable[TraceEntry] = ()) -> None:
        self.entries: list[TraceEntry] = list(entries)

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and self.entries == other.entries

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Trace of {len(self.entries)} messages>"

    def record(self, sender: Sender, data: bytes) -> None:
        """Record the bytes ``sender`` wrote: one entry per non-blank line."""
        other_side(sender)
        for piece in bytes(data).split(b"\n"):
            line = piece.removesuffix(b"\r")
            if not line.strip(b" \t"):
                continue
            try:
                self.entries.append(TraceEntry(sender=sender, message=orjson.loads(line)))
            except orjson.JSONDecodeError:
                self.entries.append(TraceEntry(sender=sender, raw=line))

    def record_message(self, sender: Sender, message: Any) -> None:
        """Record one message of a pre-framed transport (its JSON value)."""
        other_side(sender)
        self.entries.append(TraceEntry(sender=sender, message=message))

    def dumps(self) -> str:
        """JSON text lines, one entry per line, each ending with a newline."""
        return "".join(orjson.dumps(e.to_json()).decode() + "\n" for e in self.entries)

    @classmethod
    def loads(cls, text: str | bytes) -> Trace:
        """The trace saved by :meth:`dumps`; ``ValueError`` on anything malformed."""
        raw = text.encode("utf-8") if isinstance(text, str) else text
        entries = []
        for number, line in enumerate(raw.splitlines(), 1):
            if line.strip():
                try:
                    entries.append(TraceEntry.from_json(orjson.loads(line)))
                except ValueError as e:
                    raise ValueError(f"line {number} of the trace: {e}") from None
        return cls(entries)

    def render(self) -> str:
        """A readable listing: number, direction, summary, then the message itself."""
        out = []
        for number, entry in enumerate(self.entries, 1):
            body = entry.to_json()
            shown = body.get("message", body.get("raw", body.get("rawBase64")))
            text = orjson.dumps(shown).decode()
            out.append(f"{number:>3} {entry.sender} -> {entry.receiver}: {entry.summary()}")
            out.append(f"    {text}")
        return "\n".join(out)

    def script(self, peer: Sender, *, exact: bool = True) -> list[Step]:
        """The steps for a :class:`ScriptedPeer` playing ``peer`` in this exchange.

        What ``peer`` sent becomes :class:`Send`; what it received becomes
        :class:`Expect` (with ``exact`` matching: the same keys and values;
        pass ``exact=False`` to accept extra keys).
        """
        other_side(peer)
        steps: list[Step] = []
        for entry in self.entries:
            if entry.sender == peer:
                steps.append(Send(message=entry.raw + b"\n" if entry.raw else entry.message))
            elif entry.raw is not None:
                raise ValueError("the trace holds a line that is not JSON: it cannot be expected")
            else:
                steps.append(Expect(message=entry.message, exact=exact))
        return steps

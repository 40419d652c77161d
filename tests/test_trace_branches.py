"""Branches of :class:`mcp_proto.testing.Trace` the rest of the suite left untaken.

``Trace.loads`` skips blank lines of a saved trace (an editor's trailing
newlines, a blank line between sections) and keeps counting lines for its
error messages.
"""

from __future__ import annotations

import pytest

from mcp_proto.testing import Trace, TraceEntry


def saved() -> Trace:
    return Trace(
        [
            TraceEntry(sender="client", message={"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            TraceEntry(sender="server", raw=b"not json"),
        ]
    )


def test_loads_skips_blank_lines() -> None:
    trace = saved()
    first, second = trace.dumps().splitlines()
    text = f"\n{first}\n  \n\t\r\n{second}\n\n\n"
    loaded = Trace.loads(text)
    assert loaded.entries == trace.entries
    assert Trace.loads(text.encode()).entries == trace.entries
    assert Trace.loads("\n \n").entries == []


def test_loads_counts_blank_lines_in_its_error_message() -> None:
    first = saved().dumps().splitlines()[0]
    with pytest.raises(ValueError, match="line 4 of the trace"):
        Trace.loads(f'{first}\n\n  \n{{"from": "nobody"}}\n')

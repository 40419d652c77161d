"""The ``mcp-proto`` command line.

``mcp-proto demo`` runs a core-only exchange (no I/O beyond printing): a client
builds a ``tools/call`` request, the bytes are decoded as a server would, a
result is encoded back, and the wire trace is printed.  The adapters issue
replaces it with a real client/server session.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import types as t
from ._errors import DecodeError
from ._message import decode_message, encode_message

__all__ = ["main"]

_META = t.RequestMetaObject(
    protocol_version="2026-07-28",
    client_capabilities=t.ClientCapabilities(),
    client_info=t.Implementation(name="mcp-proto-demo", version="0.1.0"),
)


def demo(out: list[str]) -> None:
    request = t.CallToolRequest(
        id=1, params=t.CallToolRequestParams(name="echo", arguments={"text": "hi"}, meta=_META)
    )
    wire = encode_message(request)
    out.append(f"client -> {wire.decode()}")
    received = decode_message(wire)
    assert isinstance(received, t.CallToolRequest)
    text = str((received.params.arguments or {}).get("text", ""))
    result = t.JSONRPCResultResponse(
        id=received.id,
        result=t.CallToolResult(
            content=[t.TextContent(text=text)],
            meta=t.ResultMetaObject(server_info=t.Implementation(name="demo", version="0.1.0")),
        ),
    )
    out.append(f"server -> {encode_message(result).decode()}")
    bad = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}'
    out.append(f"client -> {bad.decode()}")
    try:
        decode_message(bad)
    except DecodeError as e:
        out.append(f"server -> {encode_message(e.error_response()).decode()}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcp-proto", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="print the wire trace of a core-only exchange")
    parser.parse_args(argv)
    lines: list[str] = []
    demo(lines)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0

"""Obviously wrong arguments to public entry points are refused at once, saying what to
pass (issue 17): a command line given as one string, capabilities given as a dict."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import mcp_proto as m
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t


@pytest.mark.parametrize(
    ("connection", "cls"),
    [(m.ClientConnection, "ClientCapabilities"), (m.ServerConnection, "ServerCapabilities")],
)
def test_capabilities_must_be_the_model_class(connection: Any, cls: str) -> None:
    with pytest.raises(TypeError, match=rf"takes a mcp_proto.types.{cls}, not a value of type "
                                        rf"dict \(mcp_proto.structure\(value"):  # fmt: skip
        connection(capabilities={"tools": {}})
    with pytest.raises(TypeError, match=r"not a value of type int$"):
        connection(capabilities=3)
    made = m.structure({"tools": {}}, getattr(t, cls))
    assert connection(capabilities=made).capabilities is made


@pytest.mark.parametrize("server", [mcp_proto_sync.Server, mcp_proto_asyncio.Server,
                                    mcp_proto_trio.Server])  # fmt: skip
def test_a_server_refuses_dict_capabilities_when_it_is_made(server: Any) -> None:
    with pytest.raises(TypeError, match="ServerCapabilities, not a value of type dict"):
        server({}, capabilities={"tools": {}})


@pytest.mark.parametrize("command", ["python server.py", b"python", [], ["python", 3]])
def test_the_blocking_stdio_client_wants_a_list_of_arguments(command: Any) -> None:
    with pytest.raises(TypeError, match="the command is a"):
        mcp_proto_sync.Client.stdio(command)


@pytest.mark.parametrize("adapter", ["asyncio", "trio"])
def test_the_async_stdio_clients_want_a_list_of_arguments(adapter: str) -> None:
    module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio

    async def main() -> None:
        with pytest.raises(TypeError, match=r"not one string: 'python server.py' \(shlex"):
            async with module.Client.stdio("python server.py"):
                pass  # pragma: no cover - refused before the server starts

    anyio.run(main, backend=adapter)

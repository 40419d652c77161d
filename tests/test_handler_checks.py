"""Handler tables are checked when a server takes them (issue 17): a mistake is an error
at construction naming what to do, not a silent miss or a failure at call time."""

from __future__ import annotations

import functools
from typing import Any

import pytest

import mcp_proto as m
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto_runtime import Handlers

ASYNC = [mcp_proto_asyncio.Server, mcp_proto_trio.Server]
ALL = [mcp_proto_sync.Server, *ASYNC]


def plain(ctx: Any, params: Any) -> Any:
    return {"content": []}


async def coro(ctx: Any, params: Any) -> Any:
    return {"content": []}


def right(server: Any) -> Any:
    return plain if server is mcp_proto_sync.Server else coro


@pytest.mark.parametrize("server", ALL)
def test_a_handler_that_cannot_be_called_is_refused(server: Any) -> None:
    with pytest.raises(TypeError, match=r"the handler for 'tools/call' is 3, not something"):
        server({"tools/call": 3})


SLIPS = [("tool/call", "tools/call"), ("prompt/get", "prompts/get"),
         ("resources/templates/lists", "resources/templates/list")]  # fmt: skip


@pytest.mark.parametrize("server", ALL)
@pytest.mark.parametrize(("typo", "meant"), SLIPS)
def test_a_method_name_one_slip_from_the_spec_is_refused(
    server: Any, typo: str, meant: str
) -> None:
    with pytest.raises(
        ValueError, match=rf"no method '{typo}' in the spec: did you mean '{meant}'"
    ):
        server({typo: right(server)})


@pytest.mark.parametrize("server", ALL)
@pytest.mark.parametrize("method", ["notifications/message", "sampling/createMessage"])
def test_what_the_server_sends_takes_no_handler(server: Any, method: str) -> None:
    with pytest.raises(ValueError, match="not a request a server answers"):
        server({method: right(server)})


@pytest.mark.parametrize("server", ALL)
def test_an_extension_method_is_taken_when_its_extension_is_registered(server: Any) -> None:
    """The core answers ``-32601`` for a method no registered extension declares, so a
    handler for one would never run; with its ``Extension`` it is taken."""
    with pytest.raises(ValueError, match="needs its Extension in the server's extensions="):
        server({"com.example/frobnicate": right(server)})
    ext = m.Extension(id="com.example/frob", requests={"com.example/frobnicate": (None, None)})
    caps = t.ServerCapabilities(extensions={"com.example/frob": {}})
    taken = server({"com.example/frobnicate": right(server)}, extensions=[ext], capabilities=caps)
    assert taken.handlers.find("com.example/frobnicate") is right(server)


@pytest.mark.parametrize("server", ASYNC)
def test_an_async_server_refuses_a_plain_function(server: Any) -> None:
    with pytest.raises(TypeError, match=r"must be an async def on this server.*mcp_proto_sync"):
        server({"tools/call": plain})
    with pytest.raises(TypeError, match="catch-all"):
        server(Handlers(default=plain))


class AsyncCallable:
    async def __call__(self, ctx: Any, params: Any) -> Any:
        return {"content": []}


@pytest.mark.parametrize("server", ASYNC)
def test_an_async_server_takes_partials_and_async_callables(server: Any) -> None:
    async def with_extra(extra: int, ctx: Any, params: Any) -> Any:
        return {"content": []}

    def decorated(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(ctx: Any, params: Any) -> Any:  # a plain wrapper returning the coroutine
            return fn(ctx, params)

        return wrapper

    server({"tools/call": functools.partial(with_extra, 1), "tools/list": AsyncCallable(),
            "prompts/list": functools.partial(AsyncCallable()),
            "prompts/get": decorated(coro)})  # fmt: skip


def test_the_blocking_server_refuses_an_async_def() -> None:
    with pytest.raises(TypeError, match=r"plain function on the blocking server.*asyncio"):
        mcp_proto_sync.Server({"tools/call": coro})


@pytest.mark.parametrize("server", ALL)
def test_a_handler_added_later_is_checked_too(server: Any) -> None:
    taken = server({"tools/call": right(server)})
    with pytest.raises(ValueError, match="did you mean 'tools/list'"):
        taken.handlers.on("tool/list")(right(server))
    wrong = coro if server is mcp_proto_sync.Server else plain
    with pytest.raises(TypeError, match="the handler for 'tools/list'"):
        taken.handlers.add("tools/list", wrong)

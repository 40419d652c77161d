"""mcp_proto_runtime: the handler runtime the three adapters share.

Owns what sits between the sans-I/O core and an event loop, decided once for
``mcp_proto_sync``, ``mcp_proto_asyncio`` and ``mcp_proto_trio``:

* ``_server``: the handler table (:class:`Handlers`), a request's context
  (:class:`RequestContext`, :class:`HandlerContext`, :class:`AsyncHandlerContext`, and
  :class:`AsyncStream`, what an async context sends through),
  the answer to what a handler returned or raised (:func:`answer`,
  :func:`default_answer`), :class:`McpError`, the servers' settings
  (:class:`ServerSettings`: budgets, timeouts) and timing policy
  (:data:`LINGER_TIME`, :class:`ClientClock`);
* ``_session``: one stdio stream's server side with no I/O (:class:`ServerSession`):
  the core's events in, actions out (:class:`Write`, :class:`RunHandler`,
  :class:`CancelHandler`, :class:`ResumeReading`, :class:`Stop`), so that an adapter
  only reads, writes, spawns, cancels and waits;
* ``_http_session``: its twin for one TCP connection of an HTTP server
  (:class:`HTTPServerSession`: :class:`ReadWithin`, :class:`OpenListen`,
  :class:`EndListen`, :class:`Close`, and the stdio session's actions);
* ``_fanout``: change-notification fan-out (:class:`Outbox`, :class:`AsyncChanges`,
  :data:`FANOUT_QUEUE`, :data:`FANOUT_TIMEOUT`);
* ``_client``: what a client does around one call (:func:`build_request`,
  :func:`outcome_of`, :class:`InputRequiredError`, :class:`HTTPClientSettings`);
* ``_log``: the ``mcp_proto.server`` and ``mcp_proto.client`` loggers the adapters
  report through (:data:`server_log`, :data:`client_log`), never ``print``;
* ``_async_client``, ``_async_http``: the asyncio and trio clients' shared calls,
  listen iterator and HTTP connection pool, awaiting only the adapter's primitives.

May import: the public API of ``mcp_proto``, ``mcp_proto.types``, ``mcp_proto.http``
and ``mcp_proto.http.limits`` -- never a ``mcp_proto._x`` module
(``tests/test_import_graph.py``).  Holds no event loop: no asyncio, trio, threading,
socket, selectors, subprocess or time (``tests/test_purity.py``).  Times, tasks,
threads and sockets are the adapters'; every protocol decision is the core's.
"""

from ._api import LISTS, MAX_PAGES, Pages, completion_params, prompt_params
from ._async_client import AsyncCalls, StreamCalls, Subscription
from ._async_http import AsyncHTTPSession
from ._client import (
    SHARED_ERAS,
    Call,
    Done,
    Endpoint,
    HTTPClientSettings,
    InputHandler,
    InputRequiredError,
    Pending,
    ProbeOutcome,
    ProgressHandler,
    Retry,
    argv,
    blocking,
    build_request,
    check_era,
    era_failure,
    era_probe,
    http_failure,
    legacy_answer,
    legacy_input,
    legacy_reply,
    outcome_of,
    owner_of,
    probe_outcome,
    shown_progress,
)
from ._fanout import (
    FANOUT_QUEUE,
    FANOUT_TIMEOUT,
    AsyncChanges,
    Offer,
    Outbox,
    listen_end,
    peer_of,
    write_timed_out,
)
from ._http_session import (
    END_LISTEN,
    Close,
    EndListen,
    HTTPServerSession,
    OpenListen,
    ReadWithin,
)
from ._log import client_log, server_log
from ._reach import Route, default_tls, dig, route_for, tunnel_open
from ._server import (
    LINGER_BYTES,
    LINGER_TIME,
    SEND_REFUSED,
    AsyncHandlerContext,
    AsyncServerSettings,
    AsyncStream,
    ClientClock,
    HandlerContext,
    Handlers,
    McpError,
    RequestContext,
    ServerSettings,
    acknowledgement,
    answer,
    default_answer,
    internal_error,
    no_handler,
    read_timeout,
    unknown_tool,
)
from ._session import (
    RESUME_READING,
    Action,
    CancelHandler,
    ResumeReading,
    RunHandler,
    ServerSession,
    Stop,
    Write,
)
from ._transport import Transport

__all__ = [
    "client_log",
    "server_log",
    # handlers and answers (_server)
    "Handlers",
    "McpError",
    "RequestContext",
    "HandlerContext",
    "AsyncHandlerContext",
    "AsyncStream",
    "answer",
    "default_answer",
    "acknowledgement",
    "no_handler",
    "internal_error",
    "unknown_tool",
    "SEND_REFUSED",
    # one stdio stream's server side, actions out (_session)
    "ServerSession",
    "Action",
    "Write",
    "RunHandler",
    "CancelHandler",
    "ResumeReading",
    "RESUME_READING",
    "Stop",
    # one HTTP connection's server side, actions out (_http_session)
    "HTTPServerSession",
    "ReadWithin",
    "OpenListen",
    "EndListen",
    "END_LISTEN",
    "Close",
    # server settings and timing policy (_server)
    "ServerSettings",
    "AsyncServerSettings",
    "ClientClock",
    "read_timeout",
    "LINGER_TIME",
    "LINGER_BYTES",
    # change-notification fan-out (_fanout)
    "FANOUT_QUEUE",
    "FANOUT_TIMEOUT",
    "Offer",
    "Outbox",
    "AsyncChanges",
    "listen_end",
    "peer_of",
    "write_timed_out",
    # around one client call (_client)
    "Call",
    "Retry",
    "Done",
    "InputHandler",
    "ProgressHandler",
    "InputRequiredError",
    "build_request",
    "era_failure",
    "legacy_input",
    "SHARED_ERAS",
    "check_era",
    "era_probe",
    "legacy_reply",
    "outcome_of",
    "owner_of",
    "ProbeOutcome",
    "probe_outcome",
    "Endpoint",
    "Transport",
    "LISTS",
    "MAX_PAGES",
    "Pages",
    "completion_params",
    "prompt_params",
    "Pending",
    "blocking",
    "shown_progress",
    "argv",
    "Route",
    "default_tls",
    "route_for",
    "dig",
    "tunnel_open",
    "HTTPClientSettings",
    "http_failure",
    "legacy_answer",
    # the async clients' shared body (_async_client, _async_http)
    "AsyncCalls",
    "StreamCalls",
    "Subscription",
    "AsyncHTTPSession",
]

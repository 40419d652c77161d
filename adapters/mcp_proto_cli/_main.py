"""The ``mcp-proto`` command line.

* ``demo``: a scripted session against the everything server, in this process, printed
  as a wire trace (``mcp_proto_cli._demo``);
* ``serve-example --stdio | --http HOST:PORT [--adapter trio|asyncio|sync]``: the everything
  server;
* ``call --stdio CMD | --http URL METHOD [PARAMS]``: one request, the result printed as
  JSON; ``input_required`` rounds answered from ``--input-responses`` JSON, or asked at
  the terminal (form elicitations); progress shown on stderr when it is a terminal;
* ``probe --stdio CMD | --http URL``: the server's era as a dual-era client finds it
  (``server/discover``, then ``initialize`` for a legacy server), its version and a
  capability summary.

``--version`` prints the installed version.  Exit codes: 0 done, 1 the server answered
with an error or broke the protocol, 2 usage (one line, no traceback), 3 the server could
not be reached or did not answer in time (for ``serve-example``: it could not start, the
port taken or the address not this machine's).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import mcp_proto
from mcp_proto import types as t
from mcp_proto_sync import Client, InputRequiredError, McpError

from . import everything
from ._demo import demo

__all__ = ["main"]

_ALL_INPUT = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(),
    sampling=t.ClientCapabilitiesSampling(),
    roots=t.ClientCapabilitiesRoots(),
)


def _client(args: argparse.Namespace) -> Any:
    if args.http:
        return Client.http(args.http, timeout=args.timeout, capabilities=_ALL_INPUT)
    return Client.stdio(shlex.split(args.stdio), timeout=args.timeout, capabilities=_ALL_INPUT)


def _typed(text: str, schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        return text.strip().lower() in ("y", "yes", "true", "1")
    return text


def _ask(event: mcp_proto.InputRequired) -> dict[str, Any]:
    """Answer form elicitations at the terminal; anything else cannot be answered here."""
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        params = getattr(request, "params", None)
        if not isinstance(request, t.ElicitRequest) or not isinstance(
            params, t.ElicitRequestFormParams
        ):
            raise InputRequiredError(event)
        print(params.message, file=sys.stderr)
        properties = (params.requested_schema or {}).get("properties") or {}
        content = {
            name: _typed(input(f"  {name}: "), schema) for name, schema in properties.items()
        }
        out[key] = t.ElicitResult(action="accept", content=content)
    return out


def _show_progress(params: t.ProgressNotificationParams) -> None:
    total = f"/{params.total:g}" if params.total is not None else ""
    message = f" {params.message}" if params.message else ""
    sys.stderr.write(f"\rprogress {params.progress:g}{total}{message}\x1b[K")
    sys.stderr.flush()


def call(args: argparse.Namespace) -> int:
    try:
        params = json.loads(args.params) if args.params else {}
        answers = json.loads(args.input_responses) if args.input_responses else None
    except json.JSONDecodeError as e:
        print(f"mcp-proto: the JSON given is not valid: {e}", file=sys.stderr)
        return 2
    info = mcp_proto.METHODS.get(args.method)
    if not isinstance(params, dict) or info is None or info.kind is not mcp_proto.Kind.REQUEST:
        print(f"mcp-proto: {args.method!r} with {args.params!r} is not a request", file=sys.stderr)
        return 2

    def on_input(event: mcp_proto.InputRequired) -> Any:
        if answers is not None:
            return answers
        if sys.stdin.isatty():
            return _ask(event)
        raise InputRequiredError(event)

    with _client(args) as client:
        result = client.request(
            args.method,
            params,
            on_input=on_input,
            on_progress=_show_progress if sys.stderr.isatty() else None,
        )
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    print(json.dumps(mcp_proto.unstructure(result), indent=2))
    return 0


def _probe_era(client: Any, timeout: float) -> int:
    """The era as a dual-era client finds it (issue 16): modern or legacy, and the facts."""
    client.probe_timeout = timeout
    try:
        found = client.connect(timeout=2 * timeout + 1)  # the probe, then maybe initialize
    except (ConnectionError, TimeoutError) as e:
        print(f"era: none ({e})")
        return 1
    if isinstance(found, mcp_proto.Legacy):
        print(f"era: legacy, version {found.version}")
        info, caps = found.server_info, mcp_proto.unstructure(found.capabilities)
        instructions = found.instructions
    else:
        supported = found.discover.supported_versions if found.discover is not None else []
        print(f"era: modern, versions {', '.join(supported)}; using {found.version}")
        if found.discover is None:
            return 0
        meta = found.discover.meta
        info = meta.server_info if meta is not None else None
        caps = mcp_proto.unstructure(found.discover.capabilities)
        instructions = found.discover.instructions
    if info is not None:
        print(f"server: {info.name} {info.version}")
    print(f"capabilities: {', '.join(sorted(caps)) or 'none'}")
    if instructions:
        print(f"instructions: {instructions}")
    return 0


def probe(args: argparse.Namespace) -> int:
    with _client(args) as client:
        return _probe_era(client, args.timeout)


def _version() -> str:
    try:
        return importlib.metadata.version("mcp-proto")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown (not installed)"


def _serve(args: argparse.Namespace) -> int:
    """The everything server until it is stopped; a failure to start (the port taken,
    no such address) is one line on stderr and exit code 3, not a traceback."""
    try:
        everything.run(args)
    except KeyboardInterrupt:
        return 0
    except OSError as e:
        print(f"mcp-proto: cannot serve at {args.http or 'stdio'}: {e}", file=sys.stderr)
        return 3
    except BaseExceptionGroup as group:  # trio's nursery wraps what its tasks raised
        match, rest = group.split(OSError)
        if match is None or rest is not None:
            raise
        print(f"mcp-proto: cannot serve at {args.http}: {match.exceptions[0]}", file=sys.stderr)
        return 3
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mcp-proto", description=__doc__.splitlines()[0].replace("``", "")
    )
    parser.add_argument("--version", action="version", version=f"mcp-proto {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="a scripted session against the everything server, traced")
    serve = sub.add_parser("serve-example", help="serve the everything example")
    everything.add_arguments(serve)
    for name, help in (("call", "send one request"), ("probe", "discover a server")):
        p = sub.add_parser(name, help=help)
        where = p.add_mutually_exclusive_group(required=True)
        where.add_argument("--stdio", metavar="CMD", help="the server command")
        where.add_argument("--http", metavar="URL", help="the server's endpoint, http://...")
        p.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")
        if name == "call":
            p.add_argument("method", help="for instance tools/call")
            p.add_argument("params", nargs="?", help='the params as JSON, e.g. {"name":"x"}')
            p.add_argument("--input-responses", metavar="JSON", help="answers to MRTR rounds")
    args = parser.parse_args(argv)
    if args.command == "demo":
        sys.stdout.write("\n".join(demo()) + "\n")
        return 0
    if args.command == "serve-example":
        return _serve(args)
    try:
        return call(args) if args.command == "call" else probe(args)
    except (
        McpError,
        InputRequiredError,
        mcp_proto.ProtocolError,
        mcp_proto.DecodeError,
        PermissionError,  # 401/403: reached, but refused
        ValueError,  # an answer typed at the terminal that is not of the field's type
    ) as e:
        print(f"mcp-proto: {e}", file=sys.stderr)
        return 1
    except (OSError, TimeoutError) as e:
        print(f"mcp-proto: {e}", file=sys.stderr)
        return 3

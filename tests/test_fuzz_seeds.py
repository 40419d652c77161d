"""The fuzz harnesses' invariants hold on every seed, and they can fail.

The seeds are generated from the spec's examples at run time (``fuzz/corpus.py``); the
coverage-guided runs are ``python -m fuzz.run`` (``fuzz/README.md``).
"""

from __future__ import annotations

import orjson
import pytest

import mcp_proto as m
from fuzz import corpus, invariants
from tests.conftest import needs_spec

CHECKS = {
    "messages": invariants.check_decode,
    "server": invariants.check_server_stream,
    "client": invariants.check_client_stream,
}
HOSTILE = [
    b"",
    b"\n\n\r\n",
    b"{" * 5000,
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}',  # no newline
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\n',
    b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]\n',
    b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}\n',
    b'{"jsonrpc":"2.0","id":3,"method":"notifications/tools/list_changed"}\n',
    b'\xff\xfe\n{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}\n',
]


@needs_spec
@pytest.mark.parametrize("kind", list(CHECKS))
def test_every_seed_keeps_the_invariants(kind: str) -> None:
    items = corpus.seeds(kind)
    assert len(items) > 20
    for item in items:
        CHECKS[kind](item)


@pytest.mark.parametrize("data", HOSTILE)
@pytest.mark.parametrize("kind", list(CHECKS))
def test_hostile_inputs_keep_the_invariants(kind: str, data: bytes) -> None:
    CHECKS[kind](data)


@needs_spec
def test_schema_check_rejects_an_invalid_message() -> None:
    with pytest.raises(AssertionError, match="schema"):
        invariants.check_valid_output(b'{"jsonrpc":"2.0","id":1,"result":7}\n')


def test_output_check_rejects_broken_framing() -> None:
    with pytest.raises(AssertionError):
        invariants.check_valid_output(b'{"jsonrpc":"2.0","id":1,"result":{}}')


# -- what the fuzzers found (fuzz/README.md) ----------------------------------


def test_found_client_stream_notification_without_params() -> None:
    """A change notification with no ``params`` crashed the client's demultiplexer."""
    client, _ = invariants.new_client()
    client.receive_data(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
    (event,) = [client.next_event()]
    assert isinstance(event, m.InvalidMessage) and "SUB-09" in str(event.error)
    invariants.check_client_stream(
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","para-s":{}}\n'
    )


def test_found_server_answers_an_id_without_method_as_invalid_request() -> None:
    """Not a library bug: the harness had counted only lines with a method as answerable."""
    server = invariants.new_server()
    server.receive_data(b'{"jsonrpc":"2.0","id":6,"method@":"tools/list","params":{}}\n')
    event = server.next_event()
    assert isinstance(event, m.InvalidMessage)
    reply = orjson.loads(server.send(event))
    assert (reply["id"], reply["error"]["code"]) == (6, m.INVALID_REQUEST)
    invariants.check_server_stream(b'{"jsonrpc":"2.0","id":6,"method@":"tools/list"}\n')


def test_found_an_error_without_id_ends_no_request() -> None:
    """Not a library bug: an uncorrelated error (BASE-16) is reported with ``id=None``."""
    client, _ = invariants.new_client()
    client.receive_data(b'{"jsonrpc":"2.0","Id":3,"error":{"code":-32020,"message":"m"}}\n')
    event = client.next_event()
    assert isinstance(event, m.ErrorResponse) and event.id is None
    assert set(client.in_flight()) == {1, 2, 3, 4}
    invariants.check_client_stream(b'{"jsonrpc":"2.0","Id":3,"error":{"code":1,"message":"m"}}\n')

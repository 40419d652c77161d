"""The change-notification outbox policy the adapters share (issue 24): order, the bound,
what an overflow drops, the warning it logs.
"""

from __future__ import annotations

import logging

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto._fanout import FANOUT_QUEUE, Offer, Outbox, listen_end

# -- the outbox policy -----------------------------------------------------------------


def test_outbox_keeps_order_up_to_its_bound() -> None:
    box = Outbox[int](limit=3)
    assert [box.offer(i) for i in range(3)] == [Offer.QUEUED] * 3
    assert [box.pop(), box.pop()] == [0, 1]
    assert box.offer(3) is Offer.QUEUED and len(box) == 2
    assert [box.pop(), box.pop(), box.pop()] == [2, 3, None]
    assert not box.ending


def test_an_overflow_ends_the_subscriber_drops_what_waited_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    box = Outbox[int](limit=2, who="listen 7 of 127.0.0.1:1")
    with caplog.at_level(logging.WARNING, logger="mcp_proto.server"):
        offers = [box.offer(i) for i in range(5)]
    assert offers == [Offer.QUEUED, Offer.QUEUED, Offer.OVERFLOW, Offer.DROPPED, Offer.DROPPED]
    assert box.ending and len(box) == 0 and box.pop() is None
    (record,) = caplog.records
    assert record.name == "mcp_proto.server" and record.levelno == logging.WARNING
    assert "listen 7 of 127.0.0.1:1" in record.getMessage()
    box.reopen()  # the writer ended the subscriptions: new ones get notifications again
    assert box.offer(9) is Offer.QUEUED and box.pop() == 9 and not box.ending


def test_an_outbox_holds_one_notification_at_least() -> None:
    with pytest.raises(ValueError):
        Outbox[int](limit=0)
    assert Outbox[int]().limit == FANOUT_QUEUE


def test_a_connection_names_its_open_listens_for_their_graceful_end() -> None:
    tools = t.ServerCapabilitiesTools(list_changed=True)
    conn = m.ServerConnection(capabilities=t.ServerCapabilities(tools=tools))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"notifications": {"toolsListChanged": True}, "_meta": meta}
    for id, method, params in (
        (1, "subscriptions/listen", listen),
        (2, "tools/list", {"_meta": meta}),
        (3, "subscriptions/listen", listen),
    ):
        conn.receive_message({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        assert isinstance(conn.next_event(), m.Request)
    assert conn.subscriptions() == (1, 3)
    conn.send(listen_end(3))  # the graceful end (SUB-12) closes it
    assert conn.subscriptions() == (1,)

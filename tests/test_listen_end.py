"""Every way an HTTP listen ends gives its listen budget back exactly once (issue 24).

The listen budget (``max_listens``, ``max_listens_per_client``) and the change fan-out
(a writer per listen that ends a slow one) meet in each adapter's ``_end_listen``.  On
127.0.0.1, per adapter, the budget's ``admit`` and ``release`` are counted while a
listen is refused (nothing to give back), one is ended by the server for not reading
(its place is free again), one is closed by its client, and the last ones are open
when the server stops; at the end every admitted listen was released once and the
budget is empty.  And on the blocking server, whose listen is set up by a thread that
may not run again for a while after writing the acknowledgement, a change caused the
moment the acknowledgement arrives still reaches the listen.

Bounded: every wait has a deadline; each server stops at the end of its test.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from mcp_proto.http.limits import ListenBudget
from mcp_proto_runtime import Outbox, ServerSettings
from tests.test_fanout import (
    ADAPTERS,
    LISTEN,
    Exchange,
    HonestListen,
    acknowledged,
    call_flood,
    closed_by_server,
    flood_count,
    http_server,
    stalled_listen,
    timed_out,
)


class Tally:
    """The listen budget one server built, and its admissions and releases, counted."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.admitted = self.released = 0
        self.budget: ListenBudget | None = None

    def count(self, budget: ListenBudget) -> None:
        admit, release = budget.admit, budget.release

        def counting_admit(id: Any, client: Any) -> Any:
            refusal = admit(id, client)
            with self.lock:
                self.admitted += refusal is None
            return refusal

        def counting_release(client: Any) -> None:
            with self.lock:
                self.released += 1
            release(client)

        budget.admit = counting_admit  # type: ignore[method-assign]
        budget.release = counting_release  # type: ignore[method-assign]
        self.budget = budget


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Tally:
    found = Tally()
    built = ServerSettings.budgets

    def budgets(self: ServerSettings[Any], *classes: Any) -> Any:
        listens, bodies = built(self, *classes)
        found.count(listens)
        return listens, bodies

    monkeypatch.setattr(ServerSettings, "budgets", budgets)
    return found


def listen(at: tuple[str, int], id: int) -> Exchange:
    """A listen, read until it is acknowledged or answered (refused)."""
    ex = Exchange(at, id, "subscriptions/listen", LISTEN)
    ex.read(lambda ex: acknowledged(ex) or ex.ended, 10)
    return ex


def refused(ex: Exchange) -> bool:
    return ex.ended and "too many open subscriptions" in ex.messages[0]["error"]["message"]


def admitted_soon(at: tuple[str, int], id: int) -> Exchange:
    """A listen admitted once the server has seen a place given back (within 10 s)."""
    deadline = time.monotonic() + 10
    while not acknowledged(ex := listen(at, id)) and time.monotonic() < deadline:
        assert refused(ex), ex.messages
        ex.close()
        time.sleep(0.05)
    assert acknowledged(ex), "no place was given back"
    return ex


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_every_way_a_listen_ends_releases_its_budget_once(
    adapter: str, tally: Tally, caplog: pytest.LogCaptureFixture
) -> None:
    count = flood_count()
    # a queue that holds the whole flood: on a loaded machine the honest listen's writer
    # may run seldom while the flood is made, and must not fall behind for that
    limits = {"max_listens": 2, "max_listens_per_client": 2, "fanout_timeout": 0.5}
    limits["fanout_queue"] = 2 * count
    with (
        caplog.at_level(logging.WARNING, logger="mcp_proto.server"),
        http_server(adapter, **limits) as at,
    ):
        honest = HonestListen(at, 1, count)  # read in a process of its own: it keeps up
        stalled = stalled_listen(at, 2)
        over = listen(at, 3)
        assert honest.acknowledged and refused(over)  # refused: nothing started, nothing held
        over.close()
        call_flood(at, count)
        assert honest.report()["notes"] == list(range(count))
        # the stalled listen reads nothing: its write times out and the server closes it
        deadline = time.monotonic() + 10
        while not timed_out(caplog) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert closed_by_server(stalled, 10)
        stalled.close()
        second = admitted_soon(at, 4)  # ...and gave its place back
        honest.close()  # the client ends its listen
        third = admitted_soon(at, 5)
        again = listen(at, 6)
        assert refused(again)  # two open: nothing was given back twice
        again.close()
        # the server stops with two listens open
    second.close()
    third.close()
    assert tally.budget is not None
    assert (tally.admitted, tally.released) == (4, 4)
    assert tally.budget.open == 0 and not tally.budget._by_client


def test_sync_a_change_made_as_the_ack_arrives_reaches_the_listen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Was a race: the link joined the fan-out only after writing the acknowledgement.

    Every outbox made takes a second, so the listen's thread is set aside for a second
    as it sets the listen up (an HTTP listen is the only outbox this server makes).
    """
    made = Outbox.__init__

    def slowly(self: Outbox[Any], *args: Any, **kwargs: Any) -> None:
        time.sleep(1.0)
        made(self, *args, **kwargs)

    monkeypatch.setattr(Outbox, "__init__", slowly)
    with http_server("sync") as at:
        ex = listen(at, 1)
        assert acknowledged(ex)
        call_flood(at, 1)  # at once: the change is fanned out while the listen's thread sleeps
        ex.read(lambda ex: bool(ex.notes()), 10)
        ex.close()
    assert ex.notes() == [0]

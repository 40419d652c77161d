"""An honest HTTP listen, read in a process of its own: ``listen_reader.py HOST PORT ID COUNT``.

The fan-out tests flood a server that runs on a thread of the test's process; a listen
read by another thread of that process competes with the server for the interpreter
lock and, on a loaded machine, can fall behind for real (then the server rightly ends
it).  Read here, it keeps up as an honest client does.

Protocol on stdout, one JSON line each: ``{"acknowledged": true}`` once the listen is
acknowledged (or ``false`` if it ended first); then, once ``COUNT`` notifications came
(or 30 s passed), ``{"notes": [...], "sub_ids": [...], "last": <monotonic seconds of the
last>, "closed": bool, "port": <local port>}``, where ``closed`` says whether the server
closed the connection within 0.2 s after the last.  The listen stays open until stdin
ends; then the process closes it and exits.
"""

from __future__ import annotations

import json
import sys

from tests.test_fanout import LISTEN, SUB_ID, Exchange, acknowledged, is_note


def main(host: str, port: str, id: str, count: str) -> None:
    want = int(count)
    listen = Exchange((host, int(port)), int(id), "subscriptions/listen", LISTEN)
    listen.read(lambda ex: acknowledged(ex) or ex.ended, 10)
    print(json.dumps({"acknowledged": acknowledged(listen)}), flush=True)
    listen.read(lambda ex: len(ex.notes()) >= want, 30)
    listen.read(lambda ex: False, 0.2)  # nothing ends it meanwhile
    notes = [m for m in listen.messages if is_note(m)]
    report = {
        "notes": listen.notes(),
        "sub_ids": sorted({m["params"]["_meta"][SUB_ID] for m in notes}),
        "last": listen.arrived[-1] if listen.arrived else None,
        "closed": listen.closed,
        "port": listen.sock.getsockname()[1],
    }
    print(json.dumps(report), flush=True)
    sys.stdin.read()
    listen.close()


if __name__ == "__main__":
    main(*sys.argv[1:])

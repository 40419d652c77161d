"""The SDK peer of ``sdk_server.py`` over Streamable HTTP, served by uvicorn on 127.0.0.1.

    python tests/peers/sdk_http_server.py

Binds a free port itself, prints ``http://127.0.0.1:PORT/mcp``, then serves until killed.
Idle keep-alive connections are closed after 1 s (uvicorn's default is 5 s), so that the
tests see a pooled connection closed by the server.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_server import app


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app.streamable_http_app(), log_level="warning", timeout_keep_alive=1)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)

"""A Hugging Face hub on this machine, for tests without the network: the endpoint
huggingface_hub reads (`constants.ENDPOINT`, what HF_ENDPOINT sets) pointed at a closed port
(refused at once), at a socket that counts the connections made to it and answers nothing, or
at a tiny HTTP server that answers (the reachability check, which commit a branch is) and
lists the requests made to it; the run's one decision whether it may ask the hub
(`engine.encoders.hub.hub_problem`) not yet made.

The fixtures (`undecided_hub`, `listener`, `answering_hub`) are in tests/engine/conftest.py.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import urllib.parse


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class Listener:
    """A socket that accepts and counts connections, and answers nothing."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


class AnsweringHub:
    """An HTTP server that answers every HEAD request with 200, and the model-info requests
    of the repositories and branches `commits` names (`/api/models/<repo>/revision/<branch>`:
    the commit, as `HfApi.model_info` reads it); `requests` lists every request made
    ("METHOD path")."""

    def __init__(self):
        hub = self
        self.commits: dict[tuple[str, str], str] = {}
        self.requests: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self):
                hub.requests.append(f"HEAD {self.path}")
                self.send_response(200)
                self.end_headers()

            def do_GET(self):
                hub.requests.append(f"GET {self.path}")
                repo, _, branch = self.path.removeprefix("/api/models/").partition("/revision/")
                commit = hub.commits.get((repo, urllib.parse.unquote(branch)))
                body = json.dumps({"id": repo, "sha": commit}).encode()
                self.send_response(200 if commit else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

"""A plain HTTP listener on 127.0.0.1 that records every request it gets: what reaches a
host, and with which headers, counted by the tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = tuple[int, dict[str, str], bytes]


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]


def not_found(path: str) -> Answer:
    return 404, {"Content-Type": "application/json"}, b'{"message": "Not Found"}'


@dataclass
class Listener:
    """`with Listener(answer) as listener:` serves on `listener.url`; `seen` is every request."""

    answer: Callable[[str], Answer] = not_found
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def authorized(self) -> list[Seen]:
        return [seen for seen in self.seen if "authorization" in seen.headers]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

            def _serve(self) -> None:
                headers = {key.lower(): value for key, value in self.headers.items()}
                with listener._lock:
                    listener.seen.append(Seen(self.command, self.path, headers))
                status, extra, body = listener.answer(self.path)
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        return Handler


class SilentHost:
    """A port that takes connections and never answers (a host behind a firewall that
    lets the handshake through, a hung proxy); counts the connections it took."""

    def __init__(self) -> None:
        import socket
        import threading

        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self.connections = 0
        self._held: list = []
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            self._held.append(connection)

    def close(self) -> None:
        for connection in self._held:
            connection.close()
        self._socket.close()

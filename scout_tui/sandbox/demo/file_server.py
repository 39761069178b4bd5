"""A small HTTP file server on 127.0.0.1 with a PEP 503 index and optional Range support,
standing in for the nightly wheel index in tests, the demo and benchmarks (PEP 691's JSON
page too, when asked). It counts the
body bytes it sends, so a test can assert what a lookup cost."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote


@dataclass
class Served:
    ranges: bool = True
    files: dict[str, Path] = field(default_factory=dict)  # wheel file name → path
    bytes_sent: int = 0
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    json: bool = False  # PEP 691's JSON page when asked for it (else PEP 503's HTML only)
    digests: dict[str, str] = field(default_factory=dict)


SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _hash(served: Served, name: str) -> dict[str, str]:
    """The file's sha256, as an index gives it (pip checks it)."""
    with served.lock:
        if name not in served.digests:
            try:
                served.digests[name] = hashlib.sha256(served.files[name].read_bytes()).hexdigest()
            except OSError:  # a name listed with no file behind it: listed with no hash
                return {}
        return {"sha256": served.digests[name]}


def _fragment(served: Served, name: str) -> str:
    digest = _hash(served, name).get("sha256")
    return f"#sha256={digest}" if digest else ""


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "HEAD":  # as an index answers it: the headers alone
                return
            self.wfile.write(body)
            with served.lock:
                served.bytes_sent += len(body)

        def do_GET(self) -> None:
            with served.lock:
                served.requests.append(f"{self.path} {self.headers.get('Range', '')}".strip())
            path = unquote(self.path.split("?", 1)[0])
            if path.rstrip("/") == "/simple/torch":
                names = sorted(served.files)
                if served.json and SIMPLE_JSON in self.headers.get("Accept", ""):
                    files = [
                        {"filename": n, "url": f"/files/{quote(n)}", "hashes": _hash(served, n)}
                        for n in names
                    ]
                    page = {"meta": {"api-version": "1.0"}, "name": "torch", "files": files}
                    self._send(200, json.dumps(page).encode(), {"Content-Type": SIMPLE_JSON})
                    return
                links = "".join(
                    f'<a href="/files/{quote(n)}{_fragment(served, n)}">{n}</a><br/>' for n in names
                )
                body = f"<html><body>{links}</body></html>".encode()
                self._send(200, body, {"Content-Type": "text/html"})
                return
            name = path.removeprefix("/files/")
            if name not in served.files:
                self._send(404, b"not found", {})
                return
            target = served.files[name]
            size = target.stat().st_size
            wanted = self.headers.get("Range")
            if not served.ranges or not wanted:
                self._send(200, target.read_bytes(), {"Accept-Ranges": "none"})
                return
            start, end = _range(wanted, size)
            with open(target, "rb") as file:
                file.seek(start)
                body = file.read(end - start + 1)
            self._send(
                206,
                body,
                {"Content-Range": f"bytes {start}-{end}/{size}", "Accept-Ranges": "bytes"},
            )

        do_HEAD = do_GET  # uv asks a wheel's size first

    return Handler


def _range(header: str, size: int) -> tuple[int, int]:
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match:
        return 0, size - 1
    first, last = match.groups()
    if not first:  # a suffix: the last N bytes
        return max(0, size - int(last)), size - 1
    return int(first), min(size - 1, int(last)) if last else size - 1


class FileServer:
    """`with FileServer(served) as url:` serves `served.files` under `url`/simple/torch/."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/simple"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

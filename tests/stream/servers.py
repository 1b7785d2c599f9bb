"""Local TCP servers on 127.0.0.1 for the remote-timeout tests: one that accepts and never answers, one
that answers every connection with fixed bytes (garbage, an HTTP response). Nothing leaves the loopback."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


class Port(int):
    """A port number that also counts the connections its server accepted (``accepted``)."""

    accepted: list


@contextlib.contextmanager
def server(answer: bytes | None = None) -> Iterator[Port]:
    """The port of a server on 127.0.0.1 that accepts and sends ``answer`` (None: nothing, ever)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    conns: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conns.append(conn)
            if answer is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    port = Port(listener.getsockname()[1])
    port.accepted = conns
    try:
        yield port
    finally:
        stop.set()
        listener.close()
        for conn in conns:
            conn.close()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: environment for pyarrow's S3 client that never looks beyond the loopback: fake keys, no EC2 metadata
FAKE_AWS = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_ACCESS_KEY_ID": "uqeval-test-key",
    "AWS_SECRET_ACCESS_KEY": "uqeval-test-secret",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
}


def s3_uri(port: int, key: str = "bucket/k.parquet") -> str:
    """An ``s3://`` URI whose endpoint is the local server on ``port`` (plain HTTP)."""
    return f"s3://{key}?endpoint_override=127.0.0.1:{port}&scheme=http"

"""A TCP proxy a test can pull the plug on: Postgres "going down" for one run only.

Why: a test cannot stop the shared PostgreSQL server (other runs use it) and may lack the rights to
make a database of its own. Pointing a run's DSN at this proxy and calling ``down()`` gives the run
exactly what an outage gives it: every open connection is cut and new ones are refused.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.is_down = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.is_down:
                    client.close()
                    upstream.close()
                    continue
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_RDWR)

    def down(self) -> None:
        """Cut every connection and refuse new ones (the listener closes: connection refused)."""
        with self.lock:
            self.is_down = True
            self.listener.close()
            for c in self.conns:
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
                c.close()

"""A TCP relay between one racer and Postgres that chaos can take down: a database restart as one racer sees it.

Why a relay: ``fault: db_restart`` (``chaos.kinds.db_restart``) restarts the database under a
recovering racer, as a failover or ``pg_ctl restart`` would (dbos-transact-py 716). Restarting the
run's Postgres itself would cut every other trial, run and helper sharing it, and terminating the
racer's backends alone is no restart: a pool that pings its connections before use (DBOS's
``pool_pre_ping``) reconnects at once and never sees the server gone. So the one racer whose
database is restarted reaches Postgres through this relay (its DSN names the relay's port), and
``down`` does to that racer what a restart does: every open connection is cut, and every new one
is refused (accepted and closed at once, so the attempt is counted) until ``up``. Nothing else
that uses the server is touched.

What it promises: a loopback listener on a free port; ``down`` severs every relayed connection
before it returns; ``refused`` counts the connection attempts met while down (the trial observes
it, as it observes a racer's state); ``close`` ends every connection and the listener.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from urllib.parse import urlsplit, urlunsplit

_CHUNK = 65536


class Relay:
    """127.0.0.1:<port> relayed to ``upstream`` (host, port), until taken down."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.cond = threading.Condition()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.is_down = False
        self.closed = False
        self.relayed = 0  # connections relayed while up
        self.refused = 0  # connection attempts refused while down
        threading.Thread(target=self._accept, name="chaos-relay-accept", daemon=True).start()

    @classmethod
    def for_dsn(cls, dsn: str) -> tuple[Relay, str]:
        """A relay to the server ``dsn`` names, and the same DSN pointing at the relay."""
        parts = urlsplit(dsn)
        if parts.scheme not in ("postgresql", "postgres") or not parts.netloc:
            raise ValueError("a database restart relays a Postgres URL (postgresql://user:password@host:port/db), not this DSN")
        relay = cls((parts.hostname or "127.0.0.1", parts.port or 5432))
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return relay, urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{relay.port}"))

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # the listener was closed
                return
            with self.cond:
                if self.closed or self.is_down:
                    self.refused += 1
                    self.cond.notify_all()
                    _cut(client)
                    continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
                server.settimeout(None)
            except OSError:  # the real server is unreachable: the client sees that as it would
                _cut(client)
                continue
            with self.cond:
                if self.closed or self.is_down:  # went down while connecting
                    self.refused += 1
                    self.cond.notify_all()
                    _cut(client)
                    _cut(server)
                    continue
                self.pairs.append((client, server))
                self.relayed += 1
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), name="chaos-relay-pump", daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(_CHUNK):
                dst.sendall(data)
        except OSError:
            pass
        finally:  # one side ended: end the other, as a lost server or client would
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def down(self) -> int:
        """The server goes away: cut every relayed connection, refuse new ones. Returns how many were cut."""
        with self.cond:
            self.is_down = True
            pairs, self.pairs = self.pairs, []
        for a, b in pairs:
            _cut(a)
            _cut(b)
        return len(pairs)

    def up(self) -> None:
        """The server is back: new connections are relayed again."""
        with self.cond:
            self.is_down = False

    def close(self) -> None:
        with self.cond:
            self.closed = True
        with contextlib.suppress(OSError):
            self.listener.close()
        self.down()


def _cut(s: socket.socket) -> None:
    """Close ``s`` at once (a reset, as a server that went away leaves its clients)."""
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()

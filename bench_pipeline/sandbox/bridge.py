"""Inside the sandbox: 127.0.0.1:PORT -> the egress proxy's bind-mounted Unix socket, then exec.

    python3 -I -S bridge.py PORT SOCKET -- COMMAND [ARG...]

The sandbox has its own network namespace with only a loopback interface, so HTTP clients
cannot reach the host's proxy by TCP; its Unix socket is bind-mounted instead, and this
bridge gives clients the TCP address they expect (HTTPS_PROXY=http://127.0.0.1:PORT).

It binds the port *before* the command starts (no race with a command that connects at
once), forks the bridge, and execs the command in its own place, so the command's exit
status is the run's. One process, one thread, non-blocking sockets: RLIMIT_NPROC counts
threads, and the bridge must not eat the run's process budget. It dies with the sandbox's
pid namespace. Standard library only: it runs under the host's python3 with -I -S.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import sys

CHUNK = 65536
# Stop reading a side while its peer has this much unsent (backpressure, bounded memory).
HIGH_WATER = 1024 * 1024


class Pipe:
    """One TCP client and its Unix-socket twin; bytes read from one are queued for the other."""

    def __init__(self, sel: selectors.BaseSelector, tcp: socket.socket, unix: socket.socket):
        self.sel = sel
        self.peer = {tcp: unix, unix: tcp}
        self.out: dict[socket.socket, bytearray] = {tcp: bytearray(), unix: bytearray()}
        self.eof: set[socket.socket] = set()  # sides that sent EOF
        for sock in (tcp, unix):
            sock.setblocking(False)
            sel.register(sock, selectors.EVENT_READ, self)

    def handle(self, sock: socket.socket, mask: int) -> None:
        peer = self.peer[sock]
        try:
            if mask & selectors.EVENT_READ:
                data = sock.recv(CHUNK)
                if data:
                    self.out[peer] += data
                else:
                    self.eof.add(sock)
            if mask & selectors.EVENT_WRITE and self.out[sock]:
                sent = sock.send(self.out[sock])
                del self.out[sock][:sent]
        except BlockingIOError:
            pass
        except OSError:
            self.close()
            return
        for side in (sock, peer):
            if side in self.eof and not self.out[self.peer[side]]:
                # Everything that side sent has been passed on: pass the EOF on too.
                with contextlib.suppress(OSError):
                    self.peer[side].shutdown(socket.SHUT_WR)
        if all(side in self.eof for side in self.peer) and not any(self.out.values()):
            self.close()
            return
        for side in (sock, peer):
            self._rearm(side)

    def _rearm(self, sock: socket.socket) -> None:
        events = 0
        if sock not in self.eof and len(self.out[self.peer[sock]]) < HIGH_WATER:
            events |= selectors.EVENT_READ
        if self.out[sock]:
            events |= selectors.EVENT_WRITE
        try:
            if events:
                self.sel.modify(sock, events, self)
            else:
                self.sel.unregister(sock)
        except (KeyError, ValueError):
            if events:
                self.sel.register(sock, events, self)

    def close(self) -> None:
        for sock in self.peer:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(sock)
            sock.close()


def serve(listener: socket.socket, socket_path: str) -> None:
    sel = selectors.DefaultSelector()
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)
    while True:
        for key, mask in sel.select():
            if key.data is None:
                try:
                    tcp, _ = listener.accept()
                except OSError:
                    continue
                unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    unix.connect(socket_path)
                except OSError:
                    tcp.close()
                    unix.close()
                    continue
                Pipe(sel, tcp, unix)
            else:
                key.data.handle(key.fileobj, mask)


def main(args: list[str]) -> int:
    if len(args) < 4 or args[2] != "--":
        print("usage: bridge.py PORT SOCKET -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    port, socket_path, command = int(args[0]), args[1], args[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:
        # The bridge must not hold the run's stdout/stderr pipes open after the command ends.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            serve(listener, socket_path)
        finally:
            os._exit(0)
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

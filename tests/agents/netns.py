"""A network namespace with nothing but loopback, for the scripted server and the CLIs.

The issue's rule is that no test reaches any address but 127.0.0.1. The settings each agent is
given turn off telemetry and update checks, but only a namespace without a route anywhere makes
that a guarantee: a CLI run inside it that tries another address fails at once instead.

The namespace is held open by a sleeping ``unshare -n`` process. The server's listening socket
is created from a short-lived thread that has entered the namespace (a socket stays in the
namespace it was made in, whichever thread later serves it), so the server still runs inside
the test process and records into its memory; the CLIs are started in it with ``nsenter``.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def unavailable() -> str | None:
    """Why no loopback-only namespace can be made here, or None when one can."""
    for tool in ("unshare", "nsenter"):
        if shutil.which(tool) is None:
            return f"{tool} (util-linux) is not installed"
    try:
        probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -n failed: {exc}"
    if probe.returncode != 0:
        return f"unshare -n is not permitted here: {probe.stderr.decode().strip()}"
    return None


def _lo_up(sock: socket.socket) -> None:
    """``ip link set lo up`` without iproute2: set IFF_UP on ``lo`` by ioctl."""
    request = struct.pack("16sH", b"lo", 0)
    flags = struct.unpack("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, request + b"\0" * 14)[:18])[1]
    fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP) + b"\0" * 14)


class LoopbackNamespace:
    """A loopback-only network namespace; :meth:`listen` and :meth:`wrap` put things in it."""

    def __init__(self) -> None:
        self._holder = subprocess.Popen(
            ["unshare", "-n", "sleep", "infinity"], stdin=subprocess.DEVNULL
        )
        self.path = Path(f"/proc/{self._holder.pid}/ns/net")
        mine = os.readlink("/proc/self/ns/net")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until unshare has unshared (then it execs sleep)
            with contextlib.suppress(OSError):
                if os.readlink(self.path) != mine:
                    break
            time.sleep(0.01)
        else:
            self.close()
            raise RuntimeError("unshare -n did not create a namespace")
        self.listen(0).close()  # brings lo up once, for the CLIs too

    def listen(self, port: int = 0) -> socket.socket:
        """A TCP socket listening on 127.0.0.1 inside the namespace."""
        made: list[socket.socket | BaseException] = []

        def inside() -> None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                with open(self.path) as ns:
                    if libc.setns(ns.fileno(), _CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns failed")
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                _lo_up(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
                sock.listen(64)
                made.append(sock)
            except BaseException as exc:  # handed to the caller's thread
                made.append(exc)

        thread = threading.Thread(target=inside, name="netns-listen")
        thread.start()
        thread.join()
        if isinstance(made[0], BaseException):
            raise made[0]
        return made[0]

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def close(self) -> None:
        self._holder.kill()
        self._holder.wait(timeout=10)


def host_listen() -> socket.socket:
    """The fallback where no namespace can be made: 127.0.0.1 of the host, on a free port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextlib.contextmanager
def loopback_namespace() -> Iterator[LoopbackNamespace | None]:
    """A namespace for the duration of the block, or None where the machine cannot make one."""
    if unavailable() is not None:
        yield None
        return
    namespace = LoopbackNamespace()
    try:
        yield namespace
    finally:
        namespace.close()

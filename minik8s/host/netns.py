"""TCP connections made from inside another process' network namespace (``setns(2)``).

The kubelet's port forwarding connects to ``127.0.0.1:<port>`` *of the pod* (a server that listens
on the pod's loopback only is reachable, as with Kubernetes): it enters the network namespace of
one of the pod's processes, connects, and leaves.  A socket keeps the namespace it was created
in, so the connection stays the pod's after the thread returns to its own.
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading

#: ``CLONE_NEWNET``: the namespace type ``setns`` is told to expect.
CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


def connect_in_netns(pid: int, host: str, port: int, timeout: float = 5.0) -> socket.socket:
    """A TCP connection to ``host:port`` made in the network namespace of process ``pid``.

    The namespace switch happens in a short-lived thread of its own (a namespace is per thread),
    so the caller's thread and the thread pools never change namespace; the returned socket is
    blocking.  Needs CAP_SYS_ADMIN (root).  Raises OSError (no such process, refused, timed out).
    """
    result: dict[str, socket.socket | BaseException] = {}

    def work() -> None:
        try:
            own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            try:
                target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
                try:
                    _setns(target)
                    try:
                        result["socket"] = socket.create_connection((host, port), timeout)
                    finally:
                        _setns(own)
                finally:
                    os.close(target)
            finally:
                os.close(own)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["error"] = exc

    thread = threading.Thread(target=work, name=f"netns-connect-{pid}-{port}", daemon=True)
    thread.start()
    thread.join()
    error = result.get("error")
    if isinstance(error, BaseException):
        raise error if isinstance(error, OSError) else OSError(str(error))
    sock = result["socket"]
    assert isinstance(sock, socket.socket)
    sock.settimeout(None)
    return sock

"""Who is at the other end of a unix socket: the kernel's word (`SO_PEERCRED`), never the
peer's own."""

from __future__ import annotations

import os
import socket
import struct

__all__ = ["peer_uid", "same_user"]

_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process that connected `sock`, as the kernel recorded it at connect
    (`None` where the platform cannot tell: the peer is then refused)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or sock.family != socket.AF_UNIX:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, _CRED.size)
    except OSError:
        return None
    _pid, uid, _gid = _CRED.unpack(raw)
    return uid


def same_user(sock: socket.socket) -> bool:
    """Whether the peer runs as this process's user (anything else, or not knowing: no)."""
    return peer_uid(sock) == os.getuid()

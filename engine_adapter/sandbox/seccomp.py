"""Linux: the seccomp filter every sandboxed command runs under (bwrap `--seccomp FD`), written
here as classic BPF with `struct` (no libseccomp needed).

What it denies, with `EPERM`, and why:

- `socket(AF_UNIX, …)`: a read-only bind does not stop `connect()` on a unix socket, so tmux,
  docker.sock, the D-Bus session bus, ssh-agent, an editor's socket would all be in reach. With
  no way to make an AF_UNIX socket, none is, wherever it lies (outside the workspace, inside it,
  or abstract). Only the low 32 bits of the argument are compared, as the kernel reads an `int`.
  `socketpair()` stays allowed: its two ends are connected to each other and to nothing else,
  and asyncio's self-pipe, `multiprocessing.Pipe()` and node's child pipes need it.
- `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring can open sockets
  (`IORING_OP_SOCKET`) without passing through the filter.
- On x86_64, every x32 system call (numbers with bit 30 set): the same calls under other numbers.

A system call of any architecture but the native one (i386 `int 0x80` on x86_64, 32-bit ARM on
aarch64) kills the process: those tables hold `socketcall`, whose arguments a filter cannot see.
On an architecture this module does not know, `filter_program()` is None: the sandbox then
masks the usual socket directories only, and says so (see `core.Sandbox.warning`).

The file descriptor is a sealed-off memfd, read by bwrap before the command starts.
"""

from __future__ import annotations

import os
import platform
import struct

__all__ = ["AUDIT_ARCHES", "filter_fd", "filter_program", "native_arch"]

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian)
_NR, _ARCH, _ARG0 = 0, 4, 16
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_AF_UNIX = 1
_X32_BIT = 0x40000000


AUDIT_ARCHES = {
    # machine: (AUDIT_ARCH_*, socket, io_uring_setup, io_uring_enter, io_uring_register, x32)
    "x86_64": (0xC000003E, 41, 425, 426, 427, True),
    "aarch64": (0xC00000B7, 198, 425, 426, 427, False),
}
"""The architectures the filter knows, by `platform.machine()`, with their system call numbers."""
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def native_arch(machine: str | None = None) -> str | None:
    """This machine's architecture as `AUDIT_ARCHES` names it, or None when unknown."""
    name = (machine or platform.machine()).lower()
    name = _ALIASES.get(name, name)
    return name if name in AUDIT_ARCHES else None


_Step = tuple[int, int, str | None, str | None]  # code, k, where to jump if true / if false


def _assemble(steps: list[_Step | str]) -> bytes:
    """`steps` as `struct sock_filter`s: a string is a label; a jump names the label it goes to
    (None: the next step). Every jump goes forward, as classic BPF wants."""
    labels: dict[str, int] = {}
    count = 0
    for step in steps:
        if isinstance(step, str):
            labels[step] = count
        else:
            count += 1
    out: list[bytes] = []
    for step in steps:
        if isinstance(step, str):
            continue
        code, k, if_true, if_false = step
        here = len(out)
        jt = labels[if_true] - here - 1 if if_true else 0
        jf = labels[if_false] - here - 1 if if_false else 0
        out.append(struct.pack("<HBBI", code, jt, jf, k))
    return b"".join(out)


def filter_program(machine: str | None = None) -> bytes | None:
    """The compiled filter (`struct sock_filter[]`) for `machine` (default: this one), or None
    for an architecture it does not know."""
    arch = native_arch(machine)
    if arch is None:
        return None
    audit, sock, ring_setup, ring_enter, ring_register, x32 = AUDIT_ARCHES[arch]
    steps: list[_Step | str] = [
        (_LD_W_ABS, _ARCH, None, None),
        (_JEQ_K, audit, None, "kill"),  # another architecture's table: kill
        (_LD_W_ABS, _NR, None, None),
        *([(_JGE_K, _X32_BIT, "deny", None)] if x32 else []),
        (_JEQ_K, ring_setup, "deny", None),
        (_JEQ_K, ring_enter, "deny", None),
        (_JEQ_K, ring_register, "deny", None),
        (_JEQ_K, sock, "socket", None),
        (_RET_K, _ALLOW, None, None),
        "socket",
        (_LD_W_ABS, _ARG0, None, None),  # the domain, an int: the low half of args[0]
        (_JEQ_K, _AF_UNIX, "deny", None),
        (_RET_K, _ALLOW, None, None),
        "deny",
        (_RET_K, _ERRNO | 1, None, None),  # EPERM
        "kill",
        (_RET_K, _KILL_PROCESS, None, None),
    ]
    return _assemble(steps)


def filter_fd(program: bytes) -> int:
    """A file descriptor holding `program`, at offset 0, for bwrap's `--seccomp` (the caller
    passes it to the child and closes it after the start)."""
    fd = os.memfd_create("cockpit-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, program)
        # Sealed: nothing that gets hold of the descriptor can change the filter.
        import fcntl

        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW
                    | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd

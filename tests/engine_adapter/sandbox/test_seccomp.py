"""The seccomp filter as a program: a small classic-BPF interpreter runs it on every kind of
system call (hypothesis draws the architecture, the number and the argument) and its verdict
must be the rule's: EPERM for socket(AF_UNIX) (the low 32 bits of the argument, as the kernel
reads an int), io_uring and x32 calls; death for another architecture's table; allow the rest.
The real filter under the real kernel is tested in test_sandbox_sockets."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_adapter.sandbox.seccomp import AUDIT_ARCHES, filter_fd, filter_program, native_arch

ALLOW, KILL, EPERM = 0x7FFF0000, 0x80000000, 0x00050001
I386, ARM = 0x40000003, 0x40000028


def run_filter(program: bytes, *, arch: int, nr: int, arg0: int) -> int:
    """What the kernel would do: interpret the classic-BPF `program` on one seccomp_data."""
    data = struct.pack("<iIQ6Q", nr - (1 << 32) if nr >= 1 << 31 else nr, arch, 0,
                       arg0, 0, 0, 0, 0, 0)
    ops = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    for _ in range(len(ops) + 1):
        code, jt, jf, k = ops[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x15:  # jeq #k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:  # jge #k
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected op {code:#x}")
    raise AssertionError("the program did not return")


def expected(machine: str, *, arch: int, nr: int, arg0: int) -> int:
    audit, sock, setup, enter, register, x32 = AUDIT_ARCHES[machine]
    if arch != audit:
        return KILL
    if x32 and nr >= 0x40000000:
        return EPERM
    if nr in (setup, enter, register):
        return EPERM
    if nr == sock and arg0 & 0xFFFFFFFF == 1:
        return EPERM
    return ALLOW


MACHINES = sorted(AUDIT_ARCHES)


@given(machine=st.sampled_from(MACHINES),
       arch=st.sampled_from([*(v[0] for v in AUDIT_ARCHES.values()), I386, ARM, 0]),
       nr=st.one_of(st.integers(0, 600), st.sampled_from([41, 53, 198, 199, 425, 426, 427]),
                    st.integers(0x40000000, 0x400001FF), st.integers(0, 2**32 - 1)),
       arg0=st.one_of(st.sampled_from([0, 1, 2, 10, 16, 0x100000001, 0xFFFFFFFF00000001,
                                       0x1_0000_0002]), st.integers(0, 2**64 - 1)))
def test_the_filter_decides_as_the_rule_says(machine, arch, nr, arg0) -> None:
    program = filter_program(machine)
    assert program is not None
    assert run_filter(program, arch=arch, nr=nr, arg0=arg0) == \
        expected(machine, arch=arch, nr=nr, arg0=arg0)


@pytest.mark.parametrize(("machine", "nr", "arg0", "verdict"), [
    ("x86_64", 41, 1, EPERM),  # socket(AF_UNIX)
    ("x86_64", 41, 2, ALLOW),  # socket(AF_INET)
    ("x86_64", 41, 10, ALLOW),  # socket(AF_INET6)
    ("x86_64", 41, 0x7_0000_0001, EPERM),  # AF_UNIX with junk above: still an int 1
    ("x86_64", 53, 1, ALLOW),  # socketpair(AF_UNIX): connected only to itself
    ("x86_64", 42, 1, ALLOW),  # connect: no unix socket to connect with
    ("x86_64", 0x40000000 | 41, 1, EPERM),  # x32 socket
    ("x86_64", 0x40000000 | 41, 2, EPERM),  # every x32 call
    ("x86_64", 425, 0, EPERM), ("x86_64", 426, 0, EPERM), ("x86_64", 427, 0, EPERM),
    ("aarch64", 198, 1, EPERM), ("aarch64", 198, 2, ALLOW), ("aarch64", 199, 1, ALLOW),
    ("aarch64", 0x40000000 | 198, 2, ALLOW),  # aarch64 has no x32
    ("aarch64", 41, 1, ALLOW),  # 41 is not socket there
])
def test_known_calls(machine, nr, arg0, verdict) -> None:
    program = filter_program(machine)
    assert program is not None
    assert run_filter(program, arch=AUDIT_ARCHES[machine][0], nr=nr, arg0=arg0) == verdict


@pytest.mark.parametrize("foreign", [I386, ARM, 0xC00000F3])  # i386, arm, riscv64
def test_another_architectures_calls_are_fatal(foreign) -> None:
    for machine in MACHINES:
        program = filter_program(machine)
        assert program is not None
        assert run_filter(program, arch=foreign, nr=102, arg0=1) == KILL  # socketcall


@pytest.mark.parametrize("machine", ["riscv64", "ppc64le", "s390x", "i686", "armv7l", ""])
def test_an_unknown_architecture_gets_no_filter(machine) -> None:
    assert native_arch(machine or "weird") is None and filter_program(machine or "weird") is None


@pytest.mark.parametrize(("alias", "name"), [("amd64", "x86_64"), ("ARM64", "aarch64"),
                                             ("x86_64", "x86_64")])
def test_machine_names(alias, name) -> None:
    assert native_arch(alias) == name


def test_the_descriptor_holds_the_program_sealed() -> None:
    import os

    program = filter_program("x86_64")
    assert program is not None
    fd = filter_fd(program)
    try:
        assert os.read(fd, 4096) == program
        with pytest.raises(PermissionError):
            os.write(fd, b"x")
    finally:
        os.close(fd)

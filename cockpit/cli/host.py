"""`cockpit host` (the host in the foreground; `status`, `stop`) and `cockpit ps`: the one
host process per user that owns detached runs (README: "Several runs, and runs that outlive
the terminal")."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from cockpit.cli.options import ViaOption
from cockpit.cli.preflight import EXIT_SETUP

__all__ = ["HOST_HELP", "host", "host_status", "host_stop", "ps"]

HOST_HELP = ("The host that owns detached runs: `cockpit host` runs it in the foreground "
             "(commands that need one start it in the background themselves); `status` and "
             "`stop` ask the running one.")

STOP_WAIT = 20.0
"""How long `host stop` waits for the host to exit (it ends its runs within 15 s)."""


def host(
    ctx: typer.Context,
    stdio: Annotated[bool, typer.Option(
        "--stdio", help="Serve the user's host (started if none runs) on stdin and stdout, "
        'for a client on another machine: cockpit attach --via "ssh THIS-BOX cockpit host '
        '--stdio".')] = False,
    ready_fd: Annotated[int | None, typer.Option(
        "--ready-fd", hidden=True, help="A pipe to write `ready` on once the host listens "
        "(for the command that starts it).")] = None,
    keep_ended: Annotated[float | None, typer.Option(
        "--keep-ended", hidden=True, min=0, help="Seconds an ended run's events stay in the "
        "host's memory before it lets them go (then its journal serves them).")] = None,
) -> None:
    """Run the host in the foreground until stopped (ctrl-c, `cockpit host stop`)."""
    if ctx.invoked_subcommand is not None:
        return
    if stdio:
        _serve_stdio()
        return
    from cockpit.cli.hosted import launch
    from cockpit.host.daemon import run_host
    from cockpit.host.places import socket_path
    from cockpit.host.server import KEEP_ENDED_SECONDS

    def listening() -> None:
        if ready_fd is None:
            typer.echo(f"cockpit host listening on {socket_path()} (ctrl-c stops it)")

    try:
        code = run_host(launch, ready_fd=ready_fd, listening=listening,
                        keep_ended=KEEP_ENDED_SECONDS if keep_ended is None else keep_ended)
    except OSError as exc:  # a folder it cannot make or own, a socket path too long
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None
    raise typer.Exit(code)


def _serve_stdio() -> None:
    """`cockpit host --stdio`: bytes relayed between stdin/stdout and the host's socket."""
    import socket
    import sys

    from cockpit.host import HostError, ensure_host
    from cockpit.host.places import socket_path
    from cockpit.host.via import relay

    try:
        ensure_host().close()  # (started if none runs)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(socket_path()))
    except (HostError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None
    with sock:
        relay(sock, sys.stdin.buffer, sys.stdout.buffer)


def _connect(via: str | None = None) -> Any:
    """A connection to the running host, or None when there is none (said on stdout)."""
    from cockpit.host import HostClient, HostError, NoHost

    try:
        return HostClient.connect(via=via)
    except NoHost:
        return None
    except (HostError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(1) from None


def _since(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _table(runs: list[dict[str, Any]]) -> list[str]:
    from engine_adapter.text import plural

    lines = []
    for run in runs:
        waiting = run["waiting"]
        asks = [plural(n, what) for what, n in (("approval", waiting["approvals"]),
                                                 ("question", waiting["questions"])) if n]
        task = " ".join(str(run["task"]).split())
        task = task if len(task) <= 50 else task[:49] + "…"
        lines.append(f"{run['id']}  {run['status']:<9}  {run['engine']:<10}  "
                     f"{run['started']}  {', '.join(asks) or '-':<12}  {task}  {run['journal']}")
    return lines


def host_status() -> None:
    """Say whether a host runs, since when, and its runs (exit 0 either way)."""
    from cockpit.host import HostError

    client = _connect()
    if client is None:
        typer.echo("no host running")
        return
    with client:
        try:
            reply = client.request("status")
        except HostError as exc:
            typer.echo(f"cockpit: error: {exc}", err=True)
            raise typer.Exit(1) from None
    runs = reply["runs"]
    typer.echo(f"host running (pid {reply['pid']}) since {_since(reply['since'])}, "
               f"{len(runs)} run(s)")
    for line in _table(runs):
        typer.echo(f"  {line}")


def host_stop() -> None:
    """Stop the host: every live run is cancelled (its journal ends `cancelled`), then it
    exits."""
    from cockpit.host import HostError

    client = _connect()
    if client is None:
        typer.echo("no host running")
        return
    pid = client.greeting.get("pid")
    with client:
        try:
            client.request("stop")
            client.sock.settimeout(STOP_WAIT)
            while True:  # the host hangs up as it exits
                client.read()
        except HostError:
            pass
        except TimeoutError:
            typer.echo(f"cockpit: error: the host (pid {pid}) did not stop within "
                       f"{STOP_WAIT:g} s", err=True)
            raise typer.Exit(1) from None
    typer.echo(f"host stopped (pid {pid})")


def ps(
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as a JSON list of "
                                          '{"id", "task", "engine", "status", "waiting": '
                                          '{"approvals", "questions"}, "started", "journal"}.')]
    = False,
    via: ViaOption = None,
) -> None:
    """List the host's runs: id, status, engine or agent, since when, what waits for you,
    task, journal. Lost runs (their host died) are marked `lost`."""
    from cockpit.host import HostError

    client = _connect(via)
    runs: list[dict[str, Any]] = []
    if client is not None:
        with client:
            try:
                runs = client.request("ps")["runs"]
            except HostError as exc:
                typer.echo(f"cockpit: error: {exc}", err=True)
                raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(runs, indent=2))
        return
    if client is None:
        typer.echo("no host running")
        return
    if not runs:
        typer.echo("no runs")
    for line in _table(runs):
        typer.echo(line)

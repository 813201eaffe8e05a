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


_COLUMNS = (("ID", 12), ("STATUS", 9), ("ENGINE", 10), ("STARTED", 20), ("WAITING", 12),
            ("TASK", 50))
ENGINE_WIDTH = 24
"""An ENGINE longer than this (an agent's whole command line) is cut, so the columns after it
stay in line (`--json` has it whole)."""


def _table(runs: list[dict[str, Any]], *, hosts: bool = False) -> list[str]:
    """The runs as `cockpit ps` prints them, under a line of column names (`hosts`: with a
    HOST column first)."""
    from engine_adapter.text import plural, printable

    width = max([4, *(len(str(run.get("host", ""))) for run in runs)]) if hosts else 0
    # (each field as one escaped line: a task or an agent's command is the user's text, and
    # a host on another machine sends it)
    shown = [printable(str(run["engine"])) for run in runs]
    engines = min(ENGINE_WIDTH, max([10, *map(len, shown)]))
    head = "  ".join(f"{name:<{engines if name == 'ENGINE' else size}}"
                     for name, size in _COLUMNS) + "  JOURNAL"
    lines = [f"{'HOST':<{width}}  {head}" if hosts else head]
    for run, engine in zip(runs, shown, strict=True):
        waiting = run["waiting"]
        asks = [plural(n, what) for what, n in (("approval", waiting["approvals"]),
                                                 ("question", waiting["questions"])) if n]
        task = printable(str(run["task"]), 50)
        engine = printable(engine, engines)
        line = (f"{run['id']:<12}  {run['status']:<9}  {engine:<{engines}}  "
                f"{run['started']:<20}  {', '.join(asks) or 'none':<12}  {task:<50}  "
                f"{printable(str(run['journal']))}")
        lines.append(f"{run.get('host', ''):<{width}}  {line}" if hosts else line)
    return lines


def fleet_hosts(via: str | None = None) -> dict[str, str | None]:
    """The hosts `cockpit ps` and the fleet view show, by name: the one `via` reaches alone
    when given, else this machine's (`local`, its socket: None) and each of `[hosts]` in
    config.toml (its via command)."""
    from cockpit.config import LOCAL_HOST, load_config

    if via is not None:
        return {"via": via}
    return {LOCAL_HOST: None, **load_config().hosts}


def _runs_of(command: str | None) -> list[dict[str, Any]] | str | None:
    """A host's runs, or why they cannot be had; None: no host runs here."""
    from cockpit.host import HostClient, HostError, NoHost

    try:
        with HostClient.connect(via=command) as client:
            runs: list[dict[str, Any]] = client.request("ps")["runs"]
            return runs
    except NoHost:
        return None
    except (HostError, OSError) as exc:
        return f"unreachable: {exc}"


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
                                          '{"approvals", "questions"}, "started", "journal", '
                                          '"host"}.')]
    = False,
    via: ViaOption = None,
) -> None:
    """List the runs of this machine's host and of each host in the hosts table of config.toml: id,
    status, engine or agent, since when, what waits for you, task, journal (and the host).
    Lost runs (their host died) are marked `lost`; a host that cannot be reached is said on
    stderr (exit 1)."""
    hosts = fleet_hosts(via)
    runs: list[dict[str, Any]] = []
    problems: list[str] = []
    running = 0
    for name, command in hosts.items():
        found = _runs_of(command)
        if isinstance(found, str):
            problems.append(f"{name}: {found}")
        elif found is not None:
            running += 1
            runs += [{**run, "host": name} for run in found]
    for problem in problems:
        typer.echo(f"cockpit: {problem}", err=True)
    if as_json:
        typer.echo(json.dumps(runs, indent=2))
    elif not running and not problems:
        typer.echo("no host running")
    elif not runs:
        typer.echo("no runs")
    else:
        for line in _table(runs, hosts=len(hosts) > 1):
            typer.echo(line)
    if problems:
        raise typer.Exit(1)

"""`cockpit attach RUN`: the live cockpit on a run of the host, every key as in a run of this
terminal; `ctrl+q` detaches (or cancels), and the run goes on without this client. `cockpit
attach` with no run: the fleet view (`cockpit.host.fleet.fleet_app`) over this machine's host
and the `[hosts]` of config.toml; a run opened from it comes back to it when left."""

from __future__ import annotations

from typing import Annotated, Any, NoReturn, cast

import typer

from cockpit.cli.options import ThemeOption, ViaOption
from cockpit.cli.preflight import EXIT_SETUP, check_theme, user_errors

__all__ = ["attach", "attached_app"]


def attached_app(run: str, *, theme: str | None = None, via: str | None = None,
                 **options: Any) -> Any:
    """The live cockpit on the host's run `run` (an id or a prefix `cockpit ps` shows), with
    `CockpitApp`'s other `options`; `HostError` if there is no host or no such run."""
    from cockpit.host import HostClient, HostError, NoHost
    from cockpit.host.remote import RemoteSession
    from cockpit.live import CockpitApp

    try:
        with HostClient.connect(via=via) as client:
            described = client.request("describe", run=run)
    except NoHost:
        raise HostError("no host running: start a run with `cockpit run … --detach` or "
                        "`cockpit demo --detach`") from None
    *earlier, session = RemoteSession.conversation(run, described, via=via)
    # The live cockpit binds to the Session's surface, which RemoteSession presents; it shows
    # every task of the run (the earlier ones first), and its next task starts in the host
    # (`turn`), as the embedded cockpit's starts in its own process.
    return CockpitApp(cast(Any, session), theme=theme, earlier=cast(Any, earlier),
                      next_session=cast(Any, session.next_task), **options)


def _fleet(theme: str | None, via: str | None) -> NoReturn:
    """The fleet view, and the run chosen in it, until the human leaves the fleet."""
    import gc

    from cockpit.cli.host import fleet_hosts
    from cockpit.host import HostError
    from cockpit.host.fleet.fleet_app import FleetApp
    from cockpit.host.fleet.watch import HostWatch

    hosts = fleet_hosts(via)
    note: str | None = None
    while True:
        app = FleetApp([HostWatch(name, via=command) for name, command in hosts.items()],
                       theme=theme, note=note)
        choice = app.run()
        if choice is None:
            raise typer.Exit(0)
        note = None
        try:
            live = attached_app(choice.run, theme=theme, via=hosts.get(choice.host))
        except (HostError, OSError) as exc:
            note = f"could not open {choice.run}: {exc}"
            continue
        live.run()
        if live.signalled is not None:
            # The terminal closed (or a SIGTERM came) while the run was open: the run goes
            # on in the host, and no fleet view is opened again on a terminal that is gone
            # (a closed terminal sends its SIGHUP once: that view would wait for ever).
            raise typer.Exit(0)
        # The run's app is garbage now, a cycle of widgets that holds every event of the run
        # (kept out of the collector while it ran: `FramePump`): collected here, between two
        # screens, not by the full collection it soon sets off, which fell on the next
        # attach's start or a key (measured: 0.3–1.1 s for a run of 100k events).
        del live
        gc.collect()


def attach(
    run: Annotated[str | None, typer.Argument(
        help="The run's id (or the start of it), as `cockpit ps` lists it; without it, the "
        "fleet view: every run and the `needs you` inbox of their asks.")] = None,
    theme: ThemeOption = None,
    via: ViaOption = None,
) -> None:
    """Open the live cockpit on a run of the host: watch it, answer its asks, cancel it.
    Without a run, the fleet view: every run of this machine's host and of the hosts table of
    config.toml, and the `needs you` inbox (y/a/n answer the selected ask, enter opens its run,
    ctrl+q leaves; the runs go on).

    Any number of clients may attach to one run; an answer in one closes the ask in all.
    ctrl+q detaches (the run goes on in the host) or cancels the run."""
    import sys

    from cockpit.cli.run import exit_code
    from cockpit.host import HostError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        typer.echo("cockpit: error: attach needs a terminal (`cockpit ps` lists the runs "
                   "without one)", err=True)
        raise typer.Exit(EXIT_SETUP)
    with user_errors():
        check_theme(theme)
    if run is None:
        _fleet(theme, via)
    try:
        app = attached_app(run, theme=theme, via=via)
    except (HostError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None
    app.run()
    session = app.session
    if not session.done:
        why = f" ({session.lost})" if session.lost else ""
        typer.echo(f"detached from {session.session_id}{why}: it goes on in the host "
                   f"(`cockpit attach {session.session_id}`)")
        raise typer.Exit(0)
    typer.echo(f"journal: {session.journal.path}")
    raise typer.Exit(exit_code(session.state.status))

"""The host that owns runs, and the clients that watch and answer them (issue 28).

- `wire`: the protocol (newline-delimited JSON, versioned); `connection`: one client's line
  stream; `peer`: who is at the other end (`SO_PEERCRED`).
- `server`: `Host`, the one process per user that runs and serves; `daemon`: its process's
  life (log, lock, loop); `runs`: one run in it; `record`: its runs on disk, and what the next
  host does after a crash; `places`: where its socket, lock and log live.
- `activity`: what the fleet shows of a run (last activity, tokens, cost, open asks), folded
  in the host as its events come.
- `client`: a blocking connection for short commands, and the host started on demand;
  `stream`: an asyncio connection, greeted; `remote`: `RemoteSession`, a host's run with the
  surface of a `Session` (the live cockpit binds to it as it does to a local one).
- `fleet`: the fleet view: `watch` (one host's pushed rows), `board` (every host's rows as runs
  and the `needs you` inbox), `fleet_app` (`FleetApp`, the only Textual module here: no face
  imports it, so the host process never loads Textual).

Nothing above (`cockpit.cli`) is imported: the command line hands the host its launcher.
"""

from __future__ import annotations

from cockpit.host.client import HostClient, HostError, NoHost, ensure_host, start_host

__all__ = ["HostClient", "HostError", "NoHost", "ensure_host", "start_host"]

"""The host that owns runs, and the clients that watch and answer them (issue 28).

- `wire`: the protocol (newline-delimited JSON, versioned); `connection`: one client's line
  stream; `peer`: who is at the other end (`SO_PEERCRED`).
- `server`: `Host`, the one process per user that runs and serves; `daemon`: its process's
  life (log, lock, loop); `runs`: one run in it; `record`: its runs on disk, and what the next
  host does after a crash; `places`: where its socket, lock and log live.
- `client`: a blocking connection for short commands, and the host started on demand;
  `remote`: `RemoteSession`, a host's run with the surface of a `Session` (the live cockpit
  binds to it as it does to a local one).

No Textual here; nothing above (`cockpit.cli`) is imported: the command line hands the host its
launcher.
"""

from __future__ import annotations

from cockpit.host.client import HostClient, HostError, NoHost, ensure_host, start_host

__all__ = ["HostClient", "HostError", "NoHost", "ensure_host", "start_host"]

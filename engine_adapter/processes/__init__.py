"""Process scopes: every command the cockpit starts ends whole, and nothing outlives its run.

- `scopes`: `start_in_scope` / `end_scope` and the `Scope` a command runs in.
- `environment`: `command_env`, the environment a command gets (secrets left out).
- `holder`: the scope holder, the small process that ends what a command started.
"""

from engine_adapter.processes.environment import command_env, is_secret_name
from engine_adapter.processes.scopes import (
    Scope,
    end_scope,
    keep_holder_outside,
    resolve_program,
    start_in_scope,
)

__all__ = ["Scope", "command_env", "end_scope", "is_secret_name", "keep_holder_outside",
           "resolve_program", "start_in_scope"]

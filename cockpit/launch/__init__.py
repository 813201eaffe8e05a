"""From the options a run was asked for to its `Session`s: no typer, no Textual, nothing above.

- `factory`: `RunOptions` (what a run was asked for) and `SessionFactory` (the Sessions of one
  conversation); `SetupError`, what stops a run before it starts.
- `demo`: the built-in engine's offline demo; `user_engine`: a user's `module:factory`;
  `agents`: `--agent NAME|"COMMAND"` to an ACP runner; `history`: an agent's past session
  read back for the viewer; `agent_config`: what `config.toml` says
  about agents; `models`: `--model` to a real model (providers, servers, prices); `resume`: an
  agent's earlier conversations; `builtin_resume`: a built-in run's conversation continued;
  `checks`: a run's options checked before anything is created.

Each name loads its module on first use: `cockpit demo` never loads the ACP or OpenAI SDKs.
How a run is shown and ends (the live cockpit, the headless view, exit codes) is the command
line's: `cockpit.cli.run`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.lazy import lazy_face

_HOMES: dict[str, str] = {
    "AgentChoices": "cockpit.launch.agents",
    "KnownSession": "cockpit.launch.resume",
    "RunOptions": "cockpit.launch.factory",
    "SessionFactory": "cockpit.launch.factory",
    "SetupError": "cockpit.launch.factory",
    "agent_factory": "cockpit.launch.agents",
    "agent_runner": "cockpit.launch.agents",
    "agent_sessions": "cockpit.launch.resume",
    "agent_spec": "cockpit.launch.agents",
    "builtin_factory": "cockpit.launch.builtin_resume",
    "check_journal_path": "cockpit.launch.checks",
    "check_limit": "cockpit.launch.checks",
    "check_seconds": "cockpit.launch.checks",
    "config_problems": "cockpit.launch.agents",
    "demo_factory": "cockpit.launch.demo",
    "engine_factory": "cockpit.launch.user_engine",
    "forget_demo_grants": "cockpit.launch.demo",
    "is_builtin_journal": "cockpit.launch.builtin_resume",
    "journal_sessions": "cockpit.launch.resume",
    "read_agent_session": "cockpit.launch.history",
    "release_workspace": "engine_adapter.engines.builtin",
    "list_models": "cockpit.launch.models",
    "make_sandbox": "cockpit.launch.factory",
    "model_factory": "cockpit.launch.models",
    "read_builtin_run": "cockpit.launch.builtin_resume",
    "resolve_server": "cockpit.launch.models",
    "resumable": "cockpit.launch.resume",
    "resume_problem": "cockpit.launch.resume",
    "start_demo": "cockpit.launch.demo",
    "workspace": "cockpit.launch.agents",
}
"""Each name of the face, and the module it is imported from on first use."""

__all__ = list(_HOMES)

if TYPE_CHECKING:
    from cockpit.launch.agents import (
        AgentChoices as AgentChoices,
    )
    from cockpit.launch.agents import (
        agent_factory as agent_factory,
    )
    from cockpit.launch.agents import (
        agent_runner as agent_runner,
    )
    from cockpit.launch.agents import (
        agent_spec as agent_spec,
    )
    from cockpit.launch.agents import (
        config_problems as config_problems,
    )
    from cockpit.launch.agents import (
        workspace as workspace,
    )
    from cockpit.launch.builtin_resume import (
        builtin_factory as builtin_factory,
    )
    from cockpit.launch.builtin_resume import (
        is_builtin_journal as is_builtin_journal,
    )
    from cockpit.launch.builtin_resume import (
        read_builtin_run as read_builtin_run,
    )
    from cockpit.launch.checks import (
        check_journal_path as check_journal_path,
    )
    from cockpit.launch.checks import (
        check_limit as check_limit,
    )
    from cockpit.launch.checks import (
        check_seconds as check_seconds,
    )
    from cockpit.launch.demo import (
        demo_factory as demo_factory,
    )
    from cockpit.launch.demo import (
        forget_demo_grants as forget_demo_grants,
    )
    from cockpit.launch.demo import (
        start_demo as start_demo,
    )
    from cockpit.launch.factory import (
        RunOptions as RunOptions,
    )
    from cockpit.launch.factory import (
        SessionFactory as SessionFactory,
    )
    from cockpit.launch.factory import (
        SetupError as SetupError,
    )
    from cockpit.launch.factory import (
        make_sandbox as make_sandbox,
    )
    from cockpit.launch.history import (
        read_agent_session as read_agent_session,
    )
    from cockpit.launch.models import (
        list_models as list_models,
    )
    from cockpit.launch.models import (
        model_factory as model_factory,
    )
    from cockpit.launch.models import (
        resolve_server as resolve_server,
    )
    from cockpit.launch.resume import (
        KnownSession as KnownSession,
    )
    from cockpit.launch.resume import (
        agent_sessions as agent_sessions,
    )
    from cockpit.launch.resume import (
        journal_sessions as journal_sessions,
    )
    from cockpit.launch.resume import (
        resumable as resumable,
    )
    from cockpit.launch.resume import (
        resume_problem as resume_problem,
    )
    from cockpit.launch.user_engine import (
        engine_factory as engine_factory,
    )
    from engine_adapter.engines.builtin import (
        release_workspace as release_workspace,
    )

__getattr__, __dir__ = lazy_face(__name__, _HOMES)

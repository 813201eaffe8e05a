"""From the command line's options to a `Session`: no typer, no Textual.

- `factory`: `RunOptions` (what a run was asked for) and `SessionFactory` (the Sessions of one
  conversation); `SetupError`, what stops a run before it starts.
- `agents`: `--agent NAME|"COMMAND"` to an ACP runner; `agent_config`: what `config.toml` says
  about agents; `models`: `--model` to a real model (providers, servers, prices); `resume`: an
  agent's earlier conversations; `checks`: the options checked before anything is created.

Each name loads its module on first use: `cockpit demo` never loads the ACP or OpenAI SDKs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.lazy import lazy_face

_HOMES: dict[str, str] = {
    "AgentChoices": "cockpit.launch.agents",
    "EXIT_SETUP": "cockpit.launch.factory",
    "ResumeRequest": "cockpit.launch.resume",
    "RunOptions": "cockpit.launch.factory",
    "SetupError": "cockpit.launch.factory",
    "agent_factory": "cockpit.launch.agents",
    "agent_runner": "cockpit.launch.agents",
    "agent_sessions": "cockpit.launch.resume",
    "agent_spec": "cockpit.launch.agents",
    "agents_listing": "cockpit.launch.agents",
    "check_journal_path": "cockpit.launch.checks",
    "check_limit": "cockpit.launch.checks",
    "check_seconds": "cockpit.launch.checks",
    "check_theme": "cockpit.launch.checks",
    "config_problems": "cockpit.launch.agents",
    "config_warnings": "cockpit.launch.models",
    "engine_factory": "cockpit.launch.user_engine",
    "journal_sessions": "cockpit.launch.resume",
    "list_models": "cockpit.launch.models",
    "model_factory": "cockpit.launch.models",
    "present": "cockpit.launch.factory",
    "resolve_server": "cockpit.launch.models",
    "resumable": "cockpit.launch.resume",
    "resume_in_cockpit": "cockpit.launch.resume",
    "resume_problem": "cockpit.launch.resume",
    "safe_output": "cockpit.launch.checks",
    "session_lines": "cockpit.launch.resume",
    "start_demo": "cockpit.launch.demo",
    "use_tui": "cockpit.launch.factory",
    "workspace": "cockpit.launch.agents",
}

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
        agents_listing as agents_listing,
    )
    from cockpit.launch.agents import (
        config_problems as config_problems,
    )
    from cockpit.launch.agents import (
        workspace as workspace,
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
    from cockpit.launch.checks import (
        check_theme as check_theme,
    )
    from cockpit.launch.checks import (
        safe_output as safe_output,
    )
    from cockpit.launch.demo import (
        start_demo as start_demo,
    )
    from cockpit.launch.factory import (
        EXIT_SETUP as EXIT_SETUP,
    )
    from cockpit.launch.factory import (
        RunOptions as RunOptions,
    )
    from cockpit.launch.factory import (
        SetupError as SetupError,
    )
    from cockpit.launch.factory import (
        present as present,
    )
    from cockpit.launch.factory import (
        use_tui as use_tui,
    )
    from cockpit.launch.models import (
        config_warnings as config_warnings,
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
        ResumeRequest as ResumeRequest,
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
        resume_in_cockpit as resume_in_cockpit,
    )
    from cockpit.launch.resume import (
        resume_problem as resume_problem,
    )
    from cockpit.launch.resume import (
        session_lines as session_lines,
    )
    from cockpit.launch.user_engine import (
        engine_factory as engine_factory,
    )

__getattr__, __dir__ = lazy_face(__name__, _HOMES)

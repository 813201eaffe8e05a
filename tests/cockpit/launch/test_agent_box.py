"""Which folders an agent may keep its state in (`--agent-state`, the catalogue's `state`) and
the box `cockpit run --agent` gives each kind of agent: a state folder is writable over the
sandbox's masks, so one that would open what the sandbox protects is refused, with why."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.launch.agent_box import agent_box, private_home, state_problem
from cockpit.launch.factory import SetupError
from cockpit.paths import config_dir, data_dir, grants_dir
from engine_adapter.engines.acp import AgentSpecError, load_catalogue, resolve_agent


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home" / ".cockpit"))
    (tmp_path / "home" / "ws").mkdir(parents=True)
    return tmp_path / "home"


REFUSED = [
    ("/", "holds your home"), ("{home}", "holds your home"), ("{home}/..", "holds your home"),
    ("{home}/ws", "workspace"), ("{home}/ws/.git", "workspace"), ("{home}/ws/sub", "workspace"),
    ("{home}/.ssh", "credentials"), ("{home}/.ssh/keys", "credentials"),
    ("{home}/.config", "credentials"),  # holds .config/gh, .config/gcloud
    ("{home}/.aws", "credentials"), ("{home}/.docker", "credentials"),
    ("{config}", "cockpit's own"), ("{grants}", "cockpit's own"), ("{data}", "cockpit's own"),
    ("{data}/journals", "cockpit's own"), ("{home}/.cockpit", "cockpit's own"),
]


@pytest.mark.parametrize(("path", "why"), REFUSED)
def test_state_that_would_open_what_the_sandbox_protects_is_refused(home, path, why):
    path = path.format(home=home, config=config_dir(), grants=grants_dir(), data=data_dir())
    problem = state_problem(path, workspace=str(home / "ws"), home=str(home))
    assert problem is not None and why in problem, problem


@pytest.mark.parametrize("path", ["{home}/.claude", "{home}/.claude.json", "{home}/.codex",
                                  "{home}/.gemini", "{home}/.npm", "{home}/.myagent",
                                  "{home}/.config/myagent", "{private}"])
def test_an_agents_own_folders_are_allowed(home, path):
    spec = resolve_agent("true --acp")
    path = path.format(home=home, private=private_home(spec))
    assert state_problem(path, workspace=str(home / "ws"), home=str(home)) is None


def test_each_kind_of_agent_gets_its_box(home):
    claude = agent_box(load_catalogue()["claude"], home / "ws")
    assert claude.contain and claude.home is None
    assert claude.state == (str(home / ".claude"), str(home / ".claude.json"), str(home / ".npm"))
    command = resolve_agent("true --acp")
    private = agent_box(command, home / "ws")
    assert private.contain and private.state == () and private.home == str(private_home(command))
    assert private_home(command) != private_home(resolve_agent("true --other"))  # per command
    given = agent_box(command, home / "ws", [str(home / ".myagent")])
    assert given.home is None and given.state == (str(home / ".myagent"),)
    with pytest.raises(SetupError, match=r"--agent-state .*\.ssh: holds or lies in"):
        agent_box(command, home / "ws", [str(home / ".ssh")])


def test_every_catalogue_entry_names_allowed_state(home):
    for spec in load_catalogue().values():
        assert spec.state, spec.name
        for path in spec.state_paths():
            assert state_problem(path, workspace=str(home / "ws"), home=str(home)) is None


@pytest.mark.parametrize("bad", ['"relative/dir"', '"~/../etc"', '"/etc/../root"', "3",
                                 '["~/.x", 1]'])
def test_a_bad_catalogue_state_is_a_clear_error(tmp_path, bad):
    value = bad if bad.startswith("[") else f"[{bad}]"
    path = tmp_path / "agents.toml"
    path.write_text(f'[agents.x]\ncommand = "x"\nstate = {value}\n')
    with pytest.raises(AgentSpecError, match="catalogue entry 'x'"):
        load_catalogue(path)

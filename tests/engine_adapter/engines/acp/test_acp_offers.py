"""What an ACP agent offers, read without an agent process: login methods as the real agents
declare them (their `initialize` answers, captured from the npm packages into
tests/fakes/acp_agent/initialize/), settings (models, modes, options) checked against what an
agent offers, and the MCP servers an agent can take."""

from __future__ import annotations

import json
import shlex

import pytest
from acp.schema import InitializeResponse, NewSessionResponse
from fakes.acp_agent.real import ANSWERS

from engine_adapter.engines.acp import load_catalogue
from engine_adapter.engines.acp.agent import McpServer, Wanted
from engine_adapter.engines.acp.agent.auth import auth_hint, choose_auth_method
from engine_adapter.engines.acp.agent.mcp import acp_servers
from engine_adapter.engines.acp.agent.settings import (
    SettingError,
    modes_from_acp,
    options_from_acp,
    plan_settings,
)
from engine_adapter.engines.acp.text import clean


def _answer(name: str) -> InitializeResponse:
    return InitializeResponse.model_validate(json.loads((ANSWERS / name).read_text()))


CODEX = "codex-acp-2.6.0.json"
CLAUDE = "claude-agent-acp-0.49.0.json"
GEMINI = "gemini-cli-0.61.0.json"


# -- what the real agents offer (their current `initialize` answers) ---------------------------

def test_the_captured_answers_say_what_each_agent_offers():
    offers = {}
    for name in (CODEX, CLAUDE, GEMINI):
        caps = _answer(name).agent_capabilities
        sessions = caps.session_capabilities
        offers[name] = (caps.load_session, sessions.list is not None,
                        sessions.resume is not None, caps.mcp_capabilities.http,
                        caps.mcp_capabilities.sse)
    assert offers == {CODEX: (True, True, True, True, False),
                      CLAUDE: (True, True, True, True, True),
                      GEMINI: (True, False, False, True, True)}


# -- login ------------------------------------------------------------------------------------

def test_codex_api_key_method_is_satisfied_by_either_of_its_variables():
    spec, init = load_catalogue()["codex"], _answer(CODEX)
    assert choose_auth_method(init, {}, spec) is None
    for variable in ("CODEX_API_KEY", "OPENAI_API_KEY"):
        choice = choose_auth_method(init, {variable: "sk-x"}, spec)
        assert (choice.method_id, choice.variable) == ("api-key", variable)
    assert choose_auth_method(init, {"OPENAI_API_KEY": ""}, spec) is None  # empty is unset
    hint = auth_hint(init, spec)
    assert "API Key (Use an API key to authenticate): set CODEX_API_KEY or OPENAI_API_KEY" in hint
    assert "ChatGPT (Use ChatGPT to authenticate): log in with the agent's own CLI first" in hint


def test_gemini_methods_each_have_their_own_variable():
    spec, init = load_catalogue()["gemini"], _answer(GEMINI)
    assert choose_auth_method(init, {"GEMINI_API_KEY": "k"}, spec).method_id == "gemini-api-key"
    assert choose_auth_method(init, {"GOOGLE_API_KEY": "k"}, spec).method_id == "vertex-ai"
    assert choose_auth_method(init, {"GOOGLE_CLOUD_PROJECT": "p"}, spec) is None
    assert "Gemini API key (Use an API key with Gemini Developer API): set GEMINI_API_KEY" \
        in auth_hint(init, spec)


def test_claude_terminal_logins_are_shown_as_commands_never_chosen():
    spec, init = load_catalogue()["claude"], _answer(CLAUDE)
    assert choose_auth_method(init, {"ANTHROPIC_API_KEY": "k"}, spec) is None
    hint = auth_hint(init, spec)
    assert ("Claude Subscription (Use Claude subscription): log in in a terminal with: "
            "claude-agent-acp --cli auth login --claudeai (then run again)") in hint
    assert "claude reads ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN" in hint


def _init(*methods: dict) -> InitializeResponse:
    return InitializeResponse.model_validate({"protocolVersion": 1, "authMethods": list(methods)})


def test_an_env_var_method_needs_every_required_variable_and_comes_first():
    spec = load_catalogue()["codex"]
    init = _init({"id": "api-key", "name": "Key", "_meta": {"api-key": {}}},
                 {"id": "std", "name": "Standard", "type": "env_var",
                  "vars": [{"name": "A_KEY"}, {"name": "B_URL"},
                           {"name": "C_OPT", "optional": True}]})
    env = {"OPENAI_API_KEY": "k", "A_KEY": "a"}
    assert choose_auth_method(init, env, spec).method_id == "api-key"  # std lacks B_URL
    assert choose_auth_method(init, {**env, "B_URL": "u"}, spec).method_id == "std"
    assert "Standard: set A_KEY and B_URL" in auth_hint(init, spec)


def test_a_method_whose_description_names_its_variable():
    spec = load_catalogue()["codex"]
    init = _init({"id": "tok", "name": "Token", "description": "Set MY_SERVICE_TOKEN first"})
    assert choose_auth_method(init, {"MY_SERVICE_TOKEN": "t"}, spec).variable == \
        "MY_SERVICE_TOKEN"


@pytest.mark.parametrize("args", [
    ["; rm -rf ~"], ["$(curl evil)"], ["`id`"], ["a\nb"], ["\x1b[2J"], ["--x", "&&", "reboot"],
    ["'quoted'"], ["|", "sh"], ["\u202eevil"], ["x" * 5000],
])
def test_a_hostile_terminal_login_is_shown_quoted_and_cleaned(args):
    spec = load_catalogue()["claude"]
    init = _init({"id": "t", "name": "Log\x1b[31min", "type": "terminal", "args": args})
    hint = auth_hint(init, spec)
    assert "\x1b" not in hint and "\u202e" not in hint
    line = next(line for line in hint.splitlines() if "in a terminal with: " in line)
    command = line.split("in a terminal with: ", 1)[1].removesuffix(" (then run again)")
    # One command line, the agent's own program first, each argument one word (cleaned).
    shown = [clean(a, 200).replace("\n", "\\n") for a in args]
    assert shlex.split(command) == ["claude-agent-acp", *shown]


# -- settings ---------------------------------------------------------------------------------

CLAUDE_SESSION = {  # the shape of claude-agent-acp 0.49.0's session/new answer (trimmed)
    "sessionId": "s",
    "modes": {"currentModeId": "default", "availableModes": [
        {"id": "default", "name": "Default"}, {"id": "plan", "name": "Plan Mode"}]},
    "configOptions": [
        {"id": "mode", "name": "Mode", "category": "mode", "type": "select",
         "currentValue": "default", "options": [{"value": "default", "name": "Default"},
                                                {"value": "plan", "name": "Plan Mode"}]},
        {"id": "model", "name": "Model", "category": "model", "type": "select",
         "currentValue": "default", "options": [{"value": "default", "name": "Default"},
                                                {"value": "sonnet", "name": "Sonnet"}]},
        {"id": "collab", "name": "Collaboration", "category": "collaboration_mode",
         "type": "select", "currentValue": "a", "options": [
             {"group": "g", "name": "G", "options": [{"value": "a", "name": "A"},
                                                     {"value": "b", "name": "B"}]}]},
        {"id": "fast", "name": "Fast\x1b[2J", "type": "boolean", "currentValue": False},
    ]}


def _offered():
    answer = NewSessionResponse.model_validate(CLAUDE_SESSION)
    modes, mode = modes_from_acp(answer.modes)
    return options_from_acp(answer.config_options), modes, mode


def test_options_are_read_cleaned_and_grouped_values_flattened():
    options, modes, mode = _offered()
    assert [o.id for o in options] == ["mode", "model", "collab", "fast"]
    assert options[2].category is None  # a category the SDK does not know is dropped, not fatal
    assert [c.value for c in options[2].choices] == ["a", "b"]
    assert options[3].name == "Fast\\x1b[2J" and options[3].value is False
    assert [m.id for m in modes] == ["default", "plan"] and mode == "default"


def test_wishes_become_steps_matched_by_value_or_name():
    options, modes, _ = _offered()
    steps = plan_settings(Wanted(model="Sonnet", mode="Plan Mode",
                                 options=(("fast", "yes"), ("Collaboration", "b"))),
                          options, modes)
    # The mode by the agent's mode setting (ACP: config options in place of modes where
    # offered), which also makes the session mode "plan" current.
    assert [(s.kind, s.id, s.value, s.mode) for s in steps] == [
        ("option", "model", "sonnet", None), ("option", "mode", "plan", "plan"),
        ("option", "fast", True, None), ("option", "collab", "b", None)]


def test_a_mode_uses_the_mode_option_else_the_session_modes():
    options, modes, _ = _offered()
    [step] = plan_settings(Wanted(mode="plan"), options, [])
    assert (step.kind, step.id, step.value, step.mode) == ("option", "mode", "plan", None)
    without = [o for o in options if o.category != "mode"]
    [step] = plan_settings(Wanted(mode="Plan Mode"), without, modes)
    assert (step.kind, step.id, step.value, step.mode) == ("mode", "plan", "plan", None)
    with pytest.raises(SettingError, match="valid modes: default, plan"):
        plan_settings(Wanted(mode="yolo"), without, modes)
    # A mode the setting lacks but the session modes have: by the modes.
    narrow = [o.model_copy(update={"choices": o.choices[:1]}) if o.category == "mode" else o
              for o in options]
    [step] = plan_settings(Wanted(mode="plan"), narrow, modes)
    assert (step.kind, step.id) == ("mode", "plan")
    with pytest.raises(SettingError, match=r"does not offer 'yolo' for mode; valid values: "
                       r"default$"):
        plan_settings(Wanted(mode="yolo"), narrow, modes)


@pytest.mark.parametrize(("wanted", "message"), [
    (Wanted(model="opus"), "valid values: default, sonnet"),
    (Wanted(mode="yolo"), "the agent does not offer 'yolo' for mode; valid values: default, plan"),
    (Wanted(options=(("nope", "1"),)), "its settings: mode, model, collab, fast, mode (--mode)"),
    (Wanted(options=(("fast", "2"),)), "valid values: true, false"),
])
def test_what_is_not_offered_is_an_error_listing_what_is(wanted, message):
    options, modes, _ = _offered()
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_settings(wanted, options, modes)


def test_no_model_setting_at_all_says_so():
    with pytest.raises(SettingError, match="the agent offers no model setting; its settings: "
                                           "none"):
        plan_settings(Wanted(model="m"), [], [])


# -- MCP servers an agent can take -----------------------------------------------------------

def test_servers_an_agent_cannot_take_are_named():
    init = _answer(CODEX)  # http yes, sse no
    servers = (McpServer(name="a", command="/bin/a"),
               McpServer(name="b", transport="http", url="https://b"),
               McpServer(name="c", transport="sse", url="https://c"))
    taken, skipped = acp_servers(servers, init)
    assert [s.name for s in taken] == ["a", "b"]
    assert skipped == ["MCP server 'c' was left out: the agent does not take sse MCP servers "
                       "(only stdio, http)"]

"""Credential places are masked in the sandbox (issue 24, D): reading them fails, whatever the
program, and the row says `blocked by sandbox: read …`; `[sandbox] read_deny` / `read_allow`
adjust the list, and a bad value is a clear error. Real bwrap, a fake home of the test's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.sandboxed import needs_sandbox, sandboxed
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.config import load_config
from engine_adapter.sandbox import Sandbox, SandboxSettings, blocked_by_sandbox
from engine_adapter.sandbox.hidden import CREDENTIAL_NAMES, credential_paths

CREDENTIALS = {
    ".ssh/id_ed25519": "PRIVATE KEY", ".aws/credentials": "aws_secret_access_key=x",
    ".gnupg/private-keys-v1.d/k.key": "gpg-secret", ".netrc": "machine x password p",
    ".git-credentials": "https://u:tok@github.com", ".docker/config.json": '{"auths": 1}',
    ".kube/config": "token: t", ".config/gcloud/credentials.db": "gcloud-secret",
    ".npmrc": "_authToken=t",
    ".pypirc": "password = p", ".config/gh/hosts.yml": "oauth_token: t", ".env": "KEY=1",
    ".env.production": "KEY=2",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    for name, text in CREDENTIALS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    (folder / ".bashrc").write_text("# fine to read\n")
    (folder / ".docker" / "cli-plugins").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "projects" / "ws"
    workspace.mkdir(parents=True)
    (workspace / ".env").write_text("MINE=1\n")  # the project's own: readable
    (tmp_path / "projects" / ".env").write_text("PARENT_SECRET=1\n")  # a parent's: masked
    return workspace


READERS = [
    "cat {path}", "head -c 10 {path}", "python3 -c \"print(open('{path}').read())\"",
    "cp {path} stolen", "tar cf stolen.tar {path}", "grep -r . {path}", "od -c {path}",
    "ln -s {path} link && cat link", "dd if={path} of=stolen status=none",
    "perl -ne print {path}",
]


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
@needs_sandbox
def test_every_credential_place_is_unreadable_and_the_row_says_read(home, ws, name) -> None:
    path = home / name
    done = sandboxed(f"cat {path}", ws)
    assert done.exit_code != 0 and CREDENTIALS[name] not in done.output, done.output
    assert done.blocked is not None and done.blocked.startswith("read "), done.output
    assert not (ws / "stolen").exists()


@pytest.mark.parametrize("reader", READERS)
@needs_sandbox
def test_every_reader_fails(home, ws, reader) -> None:
    path = home / ".ssh" / "id_ed25519"
    done = sandboxed(reader.format(path=path), ws)
    assert "PRIVATE KEY" not in done.output, (reader, done.output)  # (perl exits 0 anyway)
    stolen = [p for p in ws.iterdir() if p.name.startswith("stolen")]
    assert all("PRIVATE KEY" not in p.read_text(errors="replace") for p in stolen)


@needs_sandbox
def test_listing_a_masked_folder_fails_and_the_rest_of_home_reads(home, ws) -> None:
    done = sandboxed(f"ls {home}/.ssh", ws)
    assert done.exit_code != 0 and done.blocked == f"read {home}/.ssh", done.output
    done = sandboxed(f"cat {home}/.bashrc .env && ls {home}/.docker", ws)
    assert done.exit_code == 0 and "fine to read" in done.output and "MINE=1" in done.output
    assert "cli-plugins" in done.output  # only config.json of .docker is masked


@needs_sandbox
def test_env_files_of_the_workspaces_parents_are_masked(ws) -> None:
    done = sandboxed("cat ../.env", ws)
    assert done.exit_code != 0 and "PARENT_SECRET" not in done.output
    assert done.blocked == f"read {ws.parent / '.env'}"


@needs_sandbox
def test_home_as_the_workspace_masks_its_credentials_too(home) -> None:
    done = sandboxed("cat .ssh/id_ed25519; cat .aws/credentials; mv .ssh ssh-moved", home)
    assert done.exit_code != 0 and "PRIVATE KEY" not in done.output
    assert "aws_secret" not in done.output and (home / ".ssh" / "id_ed25519").exists()
    assert sandboxed("cat .bashrc", home).exit_code == 0


@needs_sandbox
def test_other_users_homes_are_masked_but_mine_is_not(home, ws) -> None:
    others = [path for path in credential_paths(str(home), str(ws)) if path.startswith("/home/")]
    for other in others[:3]:
        done = sandboxed(f"ls {other}", ws)
        assert done.exit_code != 0 and done.blocked == f"read {other}", done.output


@needs_sandbox
def test_read_deny_adds_and_read_allow_removes(home, ws, tmp_path) -> None:
    extra = tmp_path / "keys"
    extra.mkdir()
    (extra / "k").write_text("extra secret\n")
    single = tmp_path / "token.txt"
    single.write_text("single secret\n")
    settings = SandboxSettings(read_deny=(str(extra), str(single)),
                               read_allow=("~/.npmrc", "~/.config/gh"))
    sandbox = Sandbox(settings, workspace=ws)
    done = sandboxed(f"cat {extra}/k", ws, sandbox=sandbox)
    assert done.exit_code != 0 and done.blocked == f"read {extra}/k"
    done = sandboxed(f"cat {single}", ws, sandbox=sandbox)
    assert done.exit_code != 0 and done.blocked == f"read {single}"
    done = sandboxed(f"cat {home}/.npmrc {home}/.config/gh/hosts.yml", ws, sandbox=sandbox)
    assert done.exit_code == 0 and "_authToken" in done.output, done.output
    assert sandboxed(f"cat {home}/.netrc", ws, sandbox=sandbox).exit_code != 0  # the rest stays


def test_a_mask_never_hides_the_workspace_or_its_parents(home, tmp_path) -> None:
    inside = home / ".config" / "gcloud" / "project"  # a workspace inside a credential place
    inside.mkdir(parents=True)
    sandbox = Sandbox(SandboxSettings(read_deny=(str(tmp_path),)), workspace=inside)
    wrapped = sandbox.wrap(["/bin/true"], cwd=inside, env={"PATH": os.defpath})
    try:
        for masked in wrapped.masked:
            real = os.path.realpath(inside)
            assert not (real == masked or real.startswith(masked + "/")), masked
    finally:
        wrapped.close()


def test_the_default_list_names_the_usual_places() -> None:
    for name in (".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker/config.json",
                 ".kube", ".config/gcloud", ".npmrc"):
        assert name in CREDENTIAL_NAMES


@pytest.mark.parametrize(("output", "blocked"), [
    ("cat: /h/.ssh/id_rsa: Permission denied", "read /h/.ssh/id_rsa"),
    ("ls: cannot open directory '/h/.ssh': Permission denied", "read /h/.ssh"),
    ("PermissionError: [Errno 13] Permission denied: '/h/.aws/credentials'",
     "read /h/.aws/credentials"),
    ("cat: ../.env: Permission denied", "read /w/.env"),
    ("cat: /h/notes: Permission denied", "write to /h/notes"),  # not a mask: as before
    ("cat: /w/x/own: Permission denied", None),  # in the workspace: an ordinary problem
])
def test_blocked_tells_a_masked_read(output, blocked) -> None:
    assert blocked_by_sandbox(output, cwd="/w/x", writable=["/w/x"], network=False,
                              masked=["/h/.ssh", "/h/.aws", "/w/.env"]) == blocked


# -- the setting ---------------------------------------------------------------------------------

BAD = [
    ('read_deny = "~/.ssh"', "must be a list of paths"),
    ("read_deny = [1]", "is not a path"),
    ('read_deny = ["relative/path"]', "is not an absolute path"),
    ('read_deny = ["~user/x"]', "is not an absolute path"),
    ('read_deny = [""]', "is not a path"),
    ('read_deny = ["/"]', "would hide every file"),
    ('read_deny = ["~"]', "would hide every file"),
    ('read_allow = ["./x"]', "is not an absolute path"),
    ('read_allow = {a = 1}', "must be a list of paths"),
    ('read_deny = ["/x\\u0007"]', "characters a path cannot have"),
]


@pytest.mark.parametrize(("line", "said"), BAD)
def test_a_bad_path_list_is_one_clear_line(tmp_path, monkeypatch, line, said) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"[sandbox]\n{line}\n")
    assert any(said in problem for problem in load_config(config).problems)
    result = CliRunner().invoke(app, ["demo", "--headless", "--speed", "0"])
    assert result.exit_code == 2 and said in result.output, result.output
    assert "Traceback" not in result.output
    with pytest.raises(ValueError, match="sandbox"):
        key, _, _ = line.partition(" = ")
        SandboxSettings(**{key: ("relative",) if "list" not in said else "x"})


def test_good_path_lists_are_read(tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[sandbox]\nread_deny = ["~/.config/x", "/srv/keys"]\n'
                      'read_allow = ["~/.npmrc"]\n')
    loaded = load_config(config)
    assert loaded.problems == []
    assert loaded.sandbox_read_deny == ("~/.config/x", "/srv/keys")
    assert loaded.sandbox_read_allow == ("~/.npmrc",)


@given(st.text(max_size=400))
def test_blocked_with_masks_on_any_text_is_short_printable_or_none(text: str) -> None:
    said = blocked_by_sandbox(text, cwd="/w", writable=["/w"], network=False,
                              masked=["/h/.ssh", "/w/.git", "/run/user"])
    assert said is None or (len(said) <= 320 and said.isprintable())

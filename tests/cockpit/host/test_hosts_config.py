"""`[hosts]` in config.toml (name = the command whose stdio reaches a host): read with every
bad entry skipped and said, kept whole when the theme is saved, and listed by `cockpit ps` and
the fleet view beside this machine's host, each run marked with its host, answered there over
its command's stdio; a host that cannot be reached is said, never hidden."""

from __future__ import annotations

import json
import shlex
import sys

from support.event_loop import run as run_loop
from support.fleet import select_ask
from support.host import HostHome, detach_demo
from support.pilot import until_shown

from cockpit.config import config_path, load_config, save_theme
from cockpit.host.fleet.fleet_app import FleetApp
from cockpit.host.fleet.watch import HostWatch


def _write(home: HostHome, text: str) -> None:
    path = home.home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_hosts_are_read_and_bad_entries_skipped_and_said(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    config_path().parent.mkdir(parents=True)
    config_path().write_text(
        '# mine\n[hosts]\nbox = "ssh box cockpit host --stdio"  # the build box\n'
        'local = "ssh me"\nempty = " "\nnum = 3\n"bad name" = "x"\n', encoding="utf-8")
    config = load_config()
    assert config.hosts == {"box": "ssh box cockpit host --stdio"}
    said = "\n".join(config.warnings())
    for name in ("'local'", "empty", "num", "'bad name'"):
        assert name in said
    # Saving the theme keeps [hosts], its comments and its bad entries as they were.
    hosts = config_path().read_text(encoding="utf-8").split("[hosts]")[1]
    assert save_theme("cockpit-light") is None
    after = config_path().read_text(encoding="utf-8")
    assert after.startswith("# mine\n") and after.endswith("[hosts]" + hosts)
    assert load_config().hosts == config.hosts


def test_hosts_that_are_not_a_table_are_said(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path))
    config_path().parent.mkdir(parents=True)
    config_path().write_text('hosts = "ssh box"\n', encoding="utf-8")
    config = load_config()
    assert config.hosts == {} and "[hosts] must be a table" in "\n".join(config.warnings())


def _stdio_of(other: HostHome) -> str:
    """The command that reaches `other`'s host over stdio (as ssh would run it there)."""
    return (f"env COCKPIT_HOME={shlex.quote(str(other.home))} "
            f"PYTHONPATH={shlex.quote(other.env['PYTHONPATH'])} "
            f"{shlex.quote(sys.executable)} -m cockpit host --stdio")


def test_ps_lists_the_runs_of_every_host_and_says_which_cannot_be_reached(host_home) -> None:
    other = HostHome()
    try:
        other.start()
        far = detach_demo(other)
        host_home.start()
        near = detach_demo(host_home)
        _write(host_home, f'[hosts]\nbox = "{_stdio_of(other)}"\n'
                          'gone = "/nonexistent/ssh gone cockpit host --stdio"\n')
        done = host_home.cockpit("ps", "--json")
        assert done.returncode == 1
        assert "gone: unreachable:" in done.stderr and "/nonexistent/ssh" in done.stderr
        rows = {row["id"]: row for row in json.loads(done.stdout)}
        assert rows[near]["host"] == "local" and rows[far]["host"] == "box"
        table = host_home.cockpit("ps").stdout.splitlines()
        assert table[0].split()[:3] == ["HOST", "ID", "STATUS"]
        assert any(line.startswith("box") and far in line for line in table)
    finally:
        other.cleanup()


async def _test_the_fleet_holds_runs_of_several_hosts(host_home, other) -> None:
    other.start()
    far = detach_demo(other)
    host_home.start()
    near = detach_demo(host_home)
    app = FleetApp([HostWatch("local", path=host_home.socket),
                    HostWatch("box", via=_stdio_of(other))], arm_seconds=0,
                   remember_theme=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await until_shown(pilot, lambda: len(app.board.inbox) == 2)
        assert {(run.host, run.id) for run in app.board.runs} == {("local", near), ("box", far)}
        box_ask = next(ask for ask in app.board.inbox if ask.host == "box")
        await select_ask(pilot, app, box_ask.key)
        await pilot.press("y")  # answered in the other host, over its command's stdio
        await until_shown(pilot, lambda: box_ask.key not in {a.key for a in app.board.inbox})
    with other.client() as client:  # the other host has it answered (by a human)
        [row] = client.request("ps")["runs"]
        assert row["id"] == far and row["waiting"]["approvals"] <= 1


def test_the_fleet_holds_runs_of_several_hosts(host_home) -> None:
    other = HostHome()
    try:
        run_loop(_test_the_fleet_holds_runs_of_several_hosts(host_home, other))
    finally:
        other.cleanup()

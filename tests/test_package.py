"""The `cockpit` package's face and seams: both apps import from the package root, the command
line and the headless printer never load Textual, replay never loads the live app, and the
production code reaches into no object's private attributes (Textual's least of all)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from textual.app import App

ROOT = Path(__file__).resolve().parents[1]


def fresh(code: str, tmp_path: Path, *args: str) -> dict:
    """Run `code` in a new interpreter; at exit it reports which modules were loaded."""
    report = tmp_path / "modules.json"
    prologue = ("import atexit, json, sys\n"
                f"atexit.register(lambda: open({str(report)!r}, 'w')"
                ".write(json.dumps(sorted(sys.modules))))\n")
    result = subprocess.run(
        [sys.executable, "-c", prologue + code, *args], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "COCKPIT_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)},
        timeout=120, check=False)
    loaded = json.loads(report.read_text()) if report.exists() else []
    return {"modules": set(loaded), "stdout": result.stdout, "stderr": result.stderr,
            "code": result.returncode}


def textual_loaded(run: dict) -> bool:
    return any(m == "textual" or m.startswith("textual.") for m in run["modules"])


def test_both_apps_import_from_the_package_root() -> None:
    from cockpit import CockpitApp, ReplayApp

    assert issubclass(CockpitApp, App) and issubclass(ReplayApp, App)
    import cockpit

    assert {"CockpitApp", "ReplayApp"} <= set(cockpit.__all__)
    assert cockpit.CockpitApp is CockpitApp


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import cockpit

    try:
        cockpit.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("cockpit.NoSuchThing did not raise")


def test_the_package_and_help_do_not_load_textual(tmp_path) -> None:
    run = fresh("import sys\nsys.argv = ['cockpit', '--help']\n"
                "import cockpit\nfrom cockpit.cli.main import main\nmain()", tmp_path)
    assert run["code"] == 0 and "demo" in run["stdout"], run["stderr"]
    assert "cockpit.cli.main" in run["modules"]
    assert not textual_loaded(run)


def test_the_headless_printer_does_not_load_textual(tmp_path) -> None:
    journal = tmp_path / "demo.jsonl"
    run = fresh("import sys\nfrom cockpit.cli.main import main\nmain()", tmp_path,
                "demo", "--headless", "--speed", "0", "--auto-approve", "--journal",
                str(journal))
    assert run["code"] == 0, run["stderr"]
    assert "cockpit.headless" in run["modules"] and journal.exists()
    assert not textual_loaded(run)


def test_a_root_import_of_the_apps_is_lazy_and_replay_never_loads_the_live_app(tmp_path) -> None:
    run = fresh("import cockpit\ncockpit.ReplayApp", tmp_path)
    assert run["code"] == 0, run["stderr"]
    assert "cockpit.replay.app" in run["modules"] and textual_loaded(run)
    assert "cockpit.live.app" not in run["modules"]
    assert "cockpit.launch.factory" not in run["modules"]
    assert not textual_loaded(fresh("import cockpit", tmp_path))


def _private_reaches(path: Path) -> list[str]:
    """`x._name` (or `getattr(x, "_name")`) where `x` is not `self` or `cls`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__") and \
                not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) > 1 and \
                isinstance(node.args[1], ast.Constant) and \
                str(node.args[1].value).startswith("_") and \
                not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.args[1].value}")
    return found


def test_production_code_reaches_into_no_private_attributes() -> None:
    # Textual's private API changes without notice (Textual is not pinned exactly); our own
    # objects say what they offer through public names.
    reaches = [r for path in sorted((ROOT / "cockpit").rglob("*.py"))
               for r in _private_reaches(path)]
    assert reaches == []

"""The cockpit raises Textual's frame cap before Textual loads (`cockpit.FRAME_CAP`); a cap the
user set wins. Each case runs in a fresh interpreter: Textual reads the variable once, on import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cockpit

PROBE = "import cockpit.live.app, textual.constants as c; print(c.MAX_FPS)"


def _cap(env: dict[str, str]) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip())


def test_the_cockpit_raises_textuals_frame_cap() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    assert _cap(env) == cockpit.FRAME_CAP > 60  # Textual's own default is 60


@pytest.mark.parametrize("chosen", ["30", "60", "240"])
def test_a_frame_cap_the_user_set_wins(chosen: str) -> None:
    assert _cap({**os.environ, "TEXTUAL_FPS": chosen}) == int(chosen)

"""A link question in the live cockpit (Pilot, headless): the link is shown marked and cut, with
the host it really goes to; nothing opens it but `o`, and `o` opens only a plain http/https link
(anything else is refused with the reason, and stays answerable by keys); once the browser took
it the agent gets `accept`; `ctrl+s` accepts without opening, `escape` declines. The browser is
recorded (`webbrowser.get` gives a controller that records what it was asked to open)."""

from __future__ import annotations

import asyncio
import webbrowser

import pytest
from support.live_app import make_app, turn
from support.pilot import until_shown

from cockpit.export.contents import question_text as export_text
from cockpit.widgets import QuestionForm
from cockpit.widgets.browser import open_in_browser
from cockpit.widgets.transcript.question_rows import question_text as pager_text
from engine_adapter.context import RunContext
from engine_adapter.text import has_unsafe
from engine_adapter.view import QuestionItem


class Recorder(webbrowser.BaseBrowser):
    """A browser that records the links it is asked to open (and says whether it took them)."""

    def __init__(self, takes: bool = True) -> None:
        super().__init__("recorder")
        self.opened: list[str] = []
        self.takes = takes

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        self.opened.append(url)
        return self.takes


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


@pytest.fixture
def browser(monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(webbrowser, "get", lambda using=None: recorder)
    return recorder


def _asks_link(url: str, answers: list):
    async def step(r) -> None:
        answers.append(await RunContext.of(r).ask_question("q-1", "Log in, please", [],
                                                           url=url))
    return step


def _form(app) -> QuestionForm:
    return app.query_one(QuestionForm)


def _head(app) -> str:
    return _form(app).query_one("#question-head").content.plain


def _note(app) -> str:
    return _form(app).query_one("#question-error").content.plain


async def _until_asked(app, pilot) -> None:
    await until_shown(pilot, lambda: _form(app).question is not None
                      and app.focused is _form(app))


def _run(url: str, keys_then, answers: list) -> None:
    app = make_app(turn(1), _asks_link(url, answers))

    async def main():
        async with app.run_test(size=(120, 40), headless=True) as pilot:
            await _until_asked(app, pilot)
            await keys_then(app, pilot)
            await pilot.press("ctrl+q")

    asyncio.run(main())


def test_o_opens_the_link_and_the_agent_gets_accept(browser):
    answers: list = []

    async def keys(app, pilot):
        head = _head(app)
        assert "link  https://example.com/login" in head and "goes to  example.com" in head
        assert "nothing opens until you press o" in head
        keys_line = _form(app).query_one("#question-keys").content.plain
        assert "[o] open it in your browser" in keys_line and "[esc] decline" in keys_line
        await pilot.press("o")
        await until_shown(pilot, lambda: bool(answers))

    _run("https://example.com/login", keys, answers)
    assert browser.opened == ["https://example.com/login"]
    assert [a.action for a in answers] == ["accept"]


def test_nothing_opens_without_the_key(browser):
    answers: list = []

    async def keys(app, pilot):
        await pilot.press("enter", "space", "tab", "y", "a", "O", "x", "down")
        await pilot.pause()
        assert browser.opened == [] and not answers and _form(app).question is not None
        await pilot.press("escape")
        await until_shown(pilot, lambda: bool(answers))

    _run("https://example.com/login", keys, answers)
    assert browser.opened == []
    assert [a.action for a in answers] == ["decline"]


def test_ctrl_s_accepts_without_opening(browser):
    answers: list = []

    async def keys(app, pilot):
        await pilot.press("ctrl+s")
        await until_shown(pilot, lambda: bool(answers))

    _run("https://example.com/login", keys, answers)
    assert browser.opened == [] and [a.action for a in answers] == ["accept"]


@pytest.mark.parametrize(("url", "says"), [
    ("javascript:alert(document.cookie)", "not a javascript: link"),
    ("file:///etc/passwd", "not a file: link"),
    ("data:text/html,<script>x</script>", "not a data: link"),
    ("vbscript:msgbox(1)", "not a vbscript: link"),
    ("https://bank.example@evil.example/", "a name before its host"),
    ("https://example.com/\u202etxt.exe", "hidden or control characters"),
    ("https://example.com/\x1b[2J", "hidden or control characters"),
    ("https://exa\u200bmple.com/", "hidden or control characters"),
    ("https://\u0430pple.com/", "non-ASCII letters"),
    ("https:evil.com", "names no host"),
])
def test_o_refuses_a_link_that_could_open_something_else(browser, url, says):
    answers: list = []

    async def keys(app, pilot):
        assert "not opened by the cockpit: " in _head(app) and says in _head(app)
        await pilot.press("o")
        await until_shown(pilot, lambda: says in _note(app))
        assert browser.opened == [] and not answers  # still asked: the human decides
        await pilot.press("escape")
        await until_shown(pilot, lambda: bool(answers))

    _run(url, keys, answers)
    assert browser.opened == [] and [a.action for a in answers] == ["decline"]


@pytest.mark.parametrize("url", [
    "https://example.com/\x1b[2J\x1b]0;owned\x07",
    "https://example.com/\u202etxt.exe\u2066",
    "https://exa\u200bmple.com/\u200d",
    "javascript:\x08\x08alert(1)\r\nfake",
    "https://example.com/\x9b31m\x00",
])
def test_a_hostile_link_is_shown_marked(browser, url):
    answers: list = []

    async def keys(app, pilot):
        head = _head(app)
        assert not has_unsafe(head) and "\r" not in head
        assert "link  " in head and ("␛" in head or "⟨U+" in head or "␈" in head
                                     or "␀" in head or "⏎" in head or "\\" in head)
        await pilot.press("escape")
        await until_shown(pilot, lambda: bool(answers))

    _run(url, keys, answers)
    assert browser.opened == []


def test_a_ten_thousand_character_link_is_cut_and_opens_whole(browser):
    answers: list = []
    url = "https://example.com/" + "x" * 10_000

    async def keys(app, pilot):
        head = _head(app)
        assert "… (9420 more characters)" in head and len(head) < 2_000
        await pilot.press("o")
        await until_shown(pilot, lambda: bool(answers))

    _run(url, keys, answers)
    assert browser.opened == [url]  # what opens is what the journal holds


def test_a_browser_that_does_not_take_the_link_leaves_the_question_open(monkeypatch):
    browser = Recorder(takes=False)
    monkeypatch.setattr(webbrowser, "get", lambda using=None: browser)
    answers: list = []

    async def keys(app, pilot):
        await pilot.press("o")
        await until_shown(pilot, lambda: "did not take the link" in _note(app))
        assert not answers and _form(app).question is not None
        await pilot.press("ctrl+s")  # opened by hand
        await until_shown(pilot, lambda: bool(answers))

    _run("https://example.com/login", keys, answers)
    assert browser.opened == ["https://example.com/login"]
    assert [a.action for a in answers] == ["accept"]


class _Lynx(webbrowser.GenericBrowser):
    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        raise AssertionError("a browser in this terminal must never be started")


@pytest.mark.parametrize("name", ["lynx", "w3m", "/usr/bin/elinks", "www-browser", "links"])
def test_a_browser_that_draws_in_this_terminal_is_never_started(monkeypatch, name):
    monkeypatch.setattr(webbrowser, "get", lambda using=None: _Lynx(name))
    said = open_in_browser("https://example.com/")
    assert said is not None and "runs in this terminal" in said


def test_no_browser_at_all_is_said(monkeypatch):
    def none(using=None):
        raise webbrowser.Error("could not locate runnable browser")
    monkeypatch.setattr(webbrowser, "get", none)
    assert "no web browser" in open_in_browser("https://example.com/")


def test_a_refused_link_never_reaches_the_browser(browser):
    assert open_in_browser("javascript:alert(1)") is not None and browser.opened == []


def test_the_link_is_in_the_transcript_pager_and_export_text_cut():
    url = "javascript:\x1b[2J" + "x" * 5_000
    item = QuestionItem(0, 1, 3, "q-1", "Log in, please", [], None, url)
    exported = export_text(item)
    assert "(link: javascript:\x1b[2Jxxx" in exported and "more characters)" in exported
    assert len(exported) < 700  # the views escape it (markdown, html) as any agent text
    assert pager_text(item).splitlines()[2] == "link: " + url  # the pager shows it whole

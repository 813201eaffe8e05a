"""The HTML report renders a reply's Markdown (issue 26 §4), safely: each construct becomes its
element (read back with an HTML parser), code is monospace and highlighted, and nothing the
model wrote becomes markup of its own — raw HTML, links, images, attributes and unsafe
characters, in a table of attacks and in generated text (hypothesis). When a headless Chromium
is installed (Debian's `chromium`), the page is also opened in it and its DOM read back after
its scripts would have run."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.journals import write

from cockpit.export import export_journal
from cockpit.export.reply_html import reply_html
from engine_adapter import AgentEnd, AgentStart, ModelUpdate, TurnStart
from engine_adapter.text import has_unsafe

# What the renderer may emit: these tags, these attributes (values checked below).
TAGS = {"p", "br", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "ul", "ol", "li",
        "blockquote", "hr", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "span",
        "mark"}
ATTRIBUTES = {"class", "data-lang", "style", "start"}


class Dom(HTMLParser):
    """Every element with its attributes, and the text, as a browser's parser would see."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.elements.append(("!--", {}))

    def tags(self) -> list[str]:
        return [tag for tag, _ in self.elements]


def assert_safe(page: str) -> Dom:
    dom = Dom(page)
    for tag, attrs in dom.elements:
        assert tag in TAGS, (tag, page)
        for name, value in attrs.items():
            assert name in ATTRIBUTES, (tag, name, page)
            if name == "style":
                assert value in ("text-align:left", "text-align:center", "text-align:right"), \
                    page
            if name == "start":
                assert (value or "").isdigit(), page
    assert not has_unsafe("".join(dom.text)), page
    return dom


# -- every construct becomes its element ----------------------------------------------------------

@pytest.mark.parametrize("source, tags", [
    ("# Title", ["h1"]),
    ("## Sub\n### Deeper", ["h2", "h3"]),
    ("**bold** and *em* and ~~gone~~", ["p", "strong", "em", "s"]),
    ("- one\n- two", ["ul", "li", "li"]),
    ("3. three\n4. four", ["ol", "li", "li"]),
    ("> quoted", ["blockquote", "p"]),
    ("run `ls -l` now", ["p", "code"]),
    ("| a | b |\n|:--|--:|\n| 1 | 2 |", ["table", "thead", "tr", "th", "th", "tbody", "tr",
                                          "td", "td"]),
    ("line one\nline two", ["p", "br"]),  # a model's line breaks stay
    ("---", ["hr"]),
])
def test_markdown_becomes_its_elements(source, tags) -> None:
    dom = assert_safe(reply_html(source))
    assert [t for t in dom.tags() if t in tags or t in TAGS - {"span", "mark"}] == tags


def test_a_fence_is_monospace_and_highlighted() -> None:
    page = reply_html("```python\ndef f(x):\n    return x  # done\n```")
    dom = assert_safe(page)
    pre = next(attrs for tag, attrs in dom.elements if tag == "pre")
    assert "hl" in (pre["class"] or "") and pre["data-lang"] == "python"
    classes = {attrs.get("class") for tag, attrs in dom.elements if tag == "span"}
    assert {"k", "nf", "c1"} <= classes  # keyword, function name, comment: Pygments' classes
    assert "def f(x):\n    return x  # done" in "".join(dom.text)


@pytest.mark.parametrize("fence", ["```\nplain\n```", "```no-such-language\nplain\n```",
                                   "    indented code"])
def test_a_fence_in_no_known_language_is_plain_monospace(fence) -> None:
    dom = assert_safe(reply_html(fence))
    assert dom.tags()[:2] == ["pre", "code"]
    assert ("plain" if "`" in fence else "indented code") in "".join(dom.text)


# -- nothing the model wrote becomes markup --------------------------------------------------------

ATTACKS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<iframe src='https://evil.example'></iframe>",
    "<svg onload=alert(1)>",
    "<!-- hidden --> comment",
    "<style>body{display:none}</style>",
    "<a href='javascript:alert(1)'>click</a>",
    "[click](javascript:alert(1))",
    "[mail](https://evil.example/?q=\"><script>alert(1)</script>)",
    "<https://evil.example/autolink>",
    "![tracker](https://evil.example/pixel.png)",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "```\"><script>alert(1)</script>\ncode\n```",
    "``` python onload=alert(1)\nx = 1\n```",
    "`<b>not bold</b>`",
    "| <b>x</b> | y |\n|---|---|\n| <script>1</script> | 2 |",
    "**<u>under</u>**",
    "<div\nonclick=alert(1)>multi-line tag</div>",
    "evil\u202etxt.exe and zero\u200bwidth",
    "```py\nname = 'e\u202evil'  # \x1b[31m\n```",
    "[e\u202evil](https://x.example/\u200b)",
    "# heading \x1b]0;title\x07",
]


@pytest.mark.parametrize("source", ATTACKS)
def test_nothing_the_model_wrote_becomes_markup(source) -> None:
    page = reply_html(source)
    dom = assert_safe(page)
    for _tag, attrs in dom.elements:
        assert not any(name.startswith("on") or name in ("href", "src") for name in attrs)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "<iframe" not in page.lower() and "<svg" not in page.lower()


def test_links_and_images_become_text_that_names_them() -> None:
    dom = assert_safe(reply_html("see [the docs](https://example.com/d) and "
                                 "![a chart](https://example.com/c.png)"))
    text = "".join(dom.text)
    assert "the docs [https://example.com/d]" in text
    assert "[image: a chart] [https://example.com/c.png]" in text


def test_unsafe_characters_are_marked_everywhere() -> None:
    page = reply_html("a\u202eb `c\u200bd`\n```py\ne = '\x1b[31m'\n```\n| \u2066x |\n|---|")
    dom = assert_safe(page)
    marks = [tag for tag in dom.tags() if tag == "mark"]
    assert len(marks) == 4, page
    text = "".join(dom.text)
    assert "⟨U+202E⟩" in text and "⟨U+200B⟩" in text and "␛" in text and "⟨U+2066⟩" in text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("<>&\"'`*_#-|[]()!:/\\ \n=\u202e\u200b\x1b\x07"
                                             "abc0123")) | st.characters(), max_size=300))
def test_any_text_renders_safely(source) -> None:
    dom = assert_safe(reply_html(source))
    for _tag, attrs in dom.elements:
        assert not any(name.startswith("on") or name in ("href", "src") for name in attrs)


# -- the report ---------------------------------------------------------------------------------

REPLY = ("# Fixed\n\nThe **median** was off by one.\n\n| file | change |\n|---|---|\n"
         "| `stats/core.py` | index |\n\n```python\ndef median(xs):\n    return xs[len(xs) // 2]"
         "\n```\n\n<img src=x onerror=\"document.title='pwned'\">\n"
         "<script>document.title='pwned'</script>")


def _report(tmp_path: Path) -> Path:
    events = [AgentStart(task="fix it", engine="e"), TurnStart(turn=1),
              ModelUpdate(turn=1, text=REPLY), AgentEnd(status="completed", result=REPLY)]
    journal = tmp_path / "run.jsonl"
    write(journal, [e.model_copy(update={"seq": i, "ts": 1.0 + i, "session_id": "s"})
                    for i, e in enumerate(events)])
    page = tmp_path / "report.html"
    page.write_text(export_journal(journal, "html").text, encoding="utf-8")
    return page


def test_the_report_renders_the_reply(tmp_path) -> None:
    page = _report(tmp_path).read_text()
    body = page.split("<body>", 1)[1]
    dom = Dom(body)
    tags = dom.tags()
    assert "h1" in tags and "strong" in tags and "table" in tags and "pre" in tags
    assert "<script" not in body and "<img" not in body
    assert ".hl .k" in page  # the highlighting's colours are in the page
    assert "font-family: ui-monospace" in page


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium here (Debian: apt-get "
                    "install chromium); the DOM is checked with an HTML parser above")
def test_the_report_in_a_real_headless_browser(tmp_path) -> None:
    page = _report(tmp_path)
    browser = _chromium()
    assert browser is not None
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=2000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = Dom(result.stdout)
    tags = dom.tags()
    # The browser built the elements the Markdown asked for, and ran nothing of the model's.
    assert {"h1", "strong", "table", "th", "td", "pre", "code"} <= set(tags)
    assert "script" not in tags and "img" not in tags
    assert "pwned" not in result.stdout.split("</title>", 1)[0]
    assert any(attrs.get("class") == "k" for tag, attrs in dom.elements if tag == "span")

"""A model's Markdown as safe HTML, for the HTML report: headings, emphasis, lists, quotes,
tables, and code in monospace, fenced blocks highlighted by Pygments.

The text is untrusted, so nothing in it becomes markup of its own making:
- raw HTML (`<script>`, `<img onerror=…>`, comments) is not parsed as HTML: it shows as text;
- links and images become text (the link's words, then its address in brackets): a report
  never sends its reader somewhere, nor loads anything from the network when opened;
- every unsafe character (a bidi override, a zero-width space, a control character) is shown as
  its marker in a highlighted `<mark class="unsafe">`, as everywhere in the report;
- single line breaks stay line breaks, as in the cockpit (a model writes lines).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from engine_adapter.text import marked

__all__ = ["HIGHLIGHT_CHARS", "code_css", "reply_html"]

HIGHLIGHT_CHARS = 200_000
"""Code blocks longer than this are shown plain (highlighting a huge block takes seconds)."""

_MARK = re.compile(r"⟨U\+[0-9A-F]{4,8}⟩|[\u2400-\u241f\u2421]")
_PYGMENTS_CLASS = "hl"


def _marked_html(text: str) -> str:
    """`text` escaped, each unsafe character as its highlighted marker."""
    shown = html.escape(marked(text), quote=True)
    return _MARK.sub(lambda m: f"<mark class='unsafe'>{m.group(0)}</mark>", shown) \
        if _MARK.search(shown) else shown


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # `html=False`: raw HTML stays text. `breaks=True`: a line break is a line break.
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False,
                                   "typographer": False}).enable("table").enable("strikethrough")
    renderer: Any = md.renderer  # the default RendererHTML: its `rules` are the public hook
    rules = renderer.rules
    rules["text"] = lambda tokens, i, *_: _marked_html(tokens[i].content)
    rules["code_inline"] = lambda tokens, i, *_: f"<code>{_marked_html(tokens[i].content)}</code>"
    rules["fence"] = lambda tokens, i, *_: _code_block(tokens[i].content, tokens[i].info)
    rules["code_block"] = lambda tokens, i, *_: _code_block(tokens[i].content, "")
    rules["link_open"] = lambda *_: "<span class='link'>"
    rules["link_close"] = _link_close
    rules["image"] = _image
    rules["html_inline"] = rules["html_block"] = lambda tokens, i, *_: _marked_html(
        tokens[i].content)  # (never produced with html=False; kept as text if ever)
    return md


def _link_target(tokens: Sequence[Any], i: int) -> str:
    """The address of the link that the token at `i` closes."""
    depth = 0
    for j in range(i - 1, -1, -1):
        token = tokens[j]
        if token.type == "link_close":
            depth += 1
        elif token.type == "link_open":
            if depth == 0:
                return str(token.attrGet("href") or "")
            depth -= 1
    return ""


def _link_close(tokens: Sequence[Any], i: int, *_: Any) -> str:
    href = _link_target(tokens, i)
    return f"</span> <span class='href'>[{_marked_html(href)}]</span>" if href else "</span>"


def _image(tokens: Sequence[Any], i: int, *_: Any) -> str:
    token = tokens[i]
    alt = "".join(child.content for child in token.children or ())
    src = str(token.attrGet("src") or "")
    return (f"<span class='image'>[image: {_marked_html(alt)}]</span> "
            f"<span class='href'>[{_marked_html(src)}]</span>")


def _code_block(code: str, info: str) -> str:
    """A fenced block: highlighted for its language (the fence's first word) when Pygments
    knows it, plain otherwise; unsafe characters marked either way."""
    language = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    label = f" data-lang='{_marked_html(language[:40])}'" if language else ""
    body = _highlighted(code, language) if language and len(code) <= HIGHLIGHT_CHARS else None
    if body is None:
        body = _marked_html(code.rstrip("\n"))
    return f"<pre class='code {_PYGMENTS_CLASS}'{label}><code>{body}</code></pre>\n"


def _highlighted(code: str, language: str) -> str | None:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    # Markers first, so what Pygments escapes is already visible text; then highlighted.
    shown = highlight(marked(code.rstrip("\n")), lexer, HtmlFormatter(nowrap=True))
    return _MARK.sub(lambda m: f"<mark class='unsafe'>{m.group(0)}</mark>", shown)


@lru_cache(maxsize=1)
def code_css() -> str:
    """The CSS of highlighted code (Pygments' default style, under `.hl`)."""
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(style="default").get_style_defs(f".{_PYGMENTS_CLASS}"))


def reply_html(text: str) -> str:
    """A reply's Markdown as safe HTML (see the module's docstring)."""
    return str(_parser().render(text))

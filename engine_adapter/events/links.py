"""A link an agent asks the human to open (an ACP URL-mode question): whether the cockpit may
open it, and how it reads cut to a line.

The URL is the agent's, so untrusted. Only a plain `http`/`https` link to a named host is
openable; anything that could make the link open something other than what the human reads is
refused with the reason, and the human may still copy it by hand: another scheme
(`javascript:`, `file:`, `data:`), a user name before the host (`https://bank.com@evil.com`),
a host in non-ASCII letters (a look-alike), whitespace or an unsafe character (a control
character, a bidi override, a zero-width space). When in doubt, refused.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from engine_adapter.text import has_unsafe

__all__ = ["OPENABLE_SCHEMES", "link_host", "link_refusal", "link_text"]

OPENABLE_SCHEMES = frozenset({"http", "https"})
"""The schemes the cockpit opens in a browser."""


def _split(url: str) -> tuple[str, str | None, bool]:
    """The scheme (lower case), the host (None: none, or a link that does not parse) and
    whether a user name or password comes before the host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # a malformed host (an unclosed `[`, a bad port)
        return url.partition(":")[0].lower(), None, False
    return parts.scheme.lower(), host or None, "@" in parts.netloc


def link_host(url: str) -> str | None:
    """The host the link points at (`evil.com` for `https://bank.com@evil.com/`), or None."""
    return _split(url)[1]


def link_refusal(url: str) -> str | None:
    """Why the cockpit will not open `url` (None: it may, on the human's key)."""
    scheme, host, user = _split(url)
    if scheme not in OPENABLE_SCHEMES:
        named = f"a {scheme}: link" if scheme and scheme.isascii() and scheme.isalnum() \
            else "this link"
        return f"the cockpit opens only http and https links, not {named}"
    if has_unsafe(url) or any(ch.isspace() for ch in url):
        return "the link holds hidden or control characters that could disguise where it goes"
    if host is None:
        return "the link names no host"
    if user:
        return "the link puts a name before its host (name@host), a common disguise"
    if not host.isascii():
        return "the link's host is written in non-ASCII letters (a look-alike may hide there)"
    return None


def link_text(url: str, limit: int = 300) -> str:
    """`url` within `limit` characters: a longer one ends in `… (N more characters)` (raw:
    the view marks its unsafe characters)."""
    if len(url) <= limit:
        return url
    return f"{url[:limit]}… ({len(url) - limit} more characters)"

"""Secrets by their shape: finding and redacting keys, tokens and private keys in any text the
cockpit writes or shows (a key pasted in a task, an agent or a tool printing one).

`redact(text)` replaces each secret with `«redacted: <kind>»` (an "openai key", a "github
token", a "private key", …), so the journal keeps where one was and what kind, never its
value. Shapes covered: OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`), Anthropic (`sk-ant-…`),
GitHub (`ghp_/gho_/ghu_/ghs_/ghr_…`, `github_pat_…`), GitLab (`glpat-…`), AWS access key ids
(`AKIA…`, `ASIA…`, …), Google API keys (`AIza…`), Slack (`xox?-…`, `xapp-…`), Stripe
(`sk_live_…`, `rk_test_…`), Hugging Face (`hf_…`), npm (`npm_…`), JSON web tokens, PEM private
key blocks (also cut off before their end), a password inside a URL (`https://user:pw@host`),
and the value of an environment-style assignment whose name says secret
(`AWS_SECRET_ACCESS_KEY=…`, `export GITHUB_TOKEN=…`: how `printenv` and `.env` files show
them).

Cost: the journal path is hot, so `may_hold_secret` is a pre-check on the serialised line (one
scan for the literal starts every shape needs); the full patterns run only on a hit. A shape
is found anywhere in a text, glued to other words or not: a key must never get through because
of what surrounds it. OpenAI's generic `sk-` needs 20 more characters with a digit and a
capital letter, so kebab-case words (`risk-assessment-framework`) stay as they are.
"""

from __future__ import annotations

import re

__all__ = ["MARK", "find_secrets", "may_hold_secret", "redact"]

MARK = "«redacted: {}»"
"""What replaces a secret: the kind of secret, never any of its characters."""

_WORD = r"[A-Za-z0-9_-]"
_SECRET_WORDS = r"(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE)"

_SHAPES: tuple[tuple[str, str, str], ...] = (
    # (group name, kind shown, pattern); earlier ones win where shapes overlap
    ("pem", "private key",
     r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s:,]|-(?!----))*"
     r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?"),
    ("anthropic", "anthropic key", r"sk-ant-" + _WORD + "{20,}"),
    ("openai", "openai key",
     r"sk-(?:proj-|svcacct-|admin-)" + _WORD + "{20,}"
     r"|sk-(?=" + _WORD + r"{0,200}[0-9])(?=" + _WORD + r"{0,200}[A-Z])" + _WORD + "{20,}"),
    ("stripe", "stripe key", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github", "github token", r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"),
    ("gitlab", "gitlab token", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("aws", "aws access key id", r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}"),
    ("google", "google api key", r"AIza[0-9A-Za-z_-]{35}"),
    ("slack", "slack token", r"xox[abposre]-[A-Za-z0-9-]{12,}|xapp-[A-Za-z0-9-]{12,}"),
    ("huggingface", "hugging face token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm", "npm token", r"npm_[A-Za-z0-9]{36}"),
    ("jwt", "json web token", r"eyJ[A-Za-z0-9_-]{13,}\.eyJ[A-Za-z0-9_-]{13,}\.[A-Za-z0-9_-]{16,}"),
)
_PATTERN = re.compile("|".join(f"(?P<{name}>{pattern})" for name, _kind, pattern in _SHAPES))
_KINDS = {name: kind for name, kind, _pattern in _SHAPES}

# Keeps what says where (the name, the user) and redacts only the value.
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Z0-9_]*" + _SECRET_WORDS + r"[A-Z0-9_]*=)"
    r"(?P<value>[^\s\"'\\]{12,}|[\"'][^\s\"'\\]{16,})")
_URL_PASSWORD = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9+-]{2,}://[^/\s:@\"']*:)"
                           r"(?P<value>[^/\s@\"']{8,})(?=@)")

_RUN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=:/@+")
_RUN_TABLE = bytes(0x61 if i in _RUN_CHARS else 0x20 for i in range(256))
_RUN = b"a" * 16
"""Every shape above holds a run of at least 16 of these characters (a test holds that): a text
without one holds no secret. Two passes in C (`translate`, `in`), no regular expression."""


def may_hold_secret(data: bytes | str) -> bool:
    """Whether `data` may hold a secret (a cheap scan; false positives are fine)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return _RUN in data.translate(_RUN_TABLE)


def _kind_mark(match: re.Match[str]) -> str:
    return MARK.format(_KINDS[match.lastgroup or ""])


def _value_mark(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith("«redacted:"):
        return match[0]
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match['name']}{quote}{MARK.format('secret value')}"


def redact(text: str) -> str:
    """`text` with every secret shape replaced by `«redacted: <kind>»`; unchanged (the same
    object) when there is none."""
    if not may_hold_secret(text):
        return text
    out = _PATTERN.sub(_kind_mark, text)
    if "=" in out:
        out = _ASSIGNMENT.sub(_value_mark, out)
    if "://" in out:
        out = _URL_PASSWORD.sub(_value_mark, out)
    return text if out == text else out


def find_secrets(text: str) -> list[str]:
    """The kinds of the secrets in `text`, in order (empty: none)."""
    if not may_hold_secret(text):
        return []
    kinds = [_KINDS[m.lastgroup or ""] for m in _PATTERN.finditer(text)]
    kinds += ["secret value" for m in _ASSIGNMENT.finditer(text)
              if not m["value"].lstrip("\"'").startswith("«redacted:")]
    kinds += ["secret value" for _ in _URL_PASSWORD.finditer(text)]
    return kinds

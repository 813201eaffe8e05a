"""The environment a command gets: the cockpit's own, minus every variable that looks like a
secret — a command's output goes to the model and the journal, so `printenv` must not hand
them `OPENAI_API_KEY` or `AWS_SECRET_ACCESS_KEY`.

A variable is left out (case-insensitive) when its name

- contains KEY, SECRET, TOKEN, PASSWORD, PASSWD, CREDENTIAL, CREDS, COOKIE or PRIVATE
  (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `PGPASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`,
  `AZURE_CLIENT_SECRET`, `AWS_SESSION_TOKEN`, …);
- has AUTH, OAUTH, PASS, PWD, DSN, SALT, WEBHOOK or SAS as one of its `_`-separated words
  (`NPM_AUTH`, `DB_PASS`, `MYSQL_PWD`, `SENTRY_DSN` — not `GIT_AUTHOR_NAME`, not `PWD` itself,
  not `OLDPWD`), or holds CONNECTION_STRING / CONNSTR;
- is a password manager's session (`OP_SESSION_*`, `BW_SESSION`);
- or is one the caller names as a key (`withheld`: the model provider's variable, whatever it is
  called);

or when its *value* holds a secret shape (`engine_adapter.redact`: an `sk-…` key under any
name, a URL with a password). `passed` names (`--pass-env NAME`, `[sandbox] pass_env`) go
through as they are: the human chose them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from engine_adapter.redact import find_secrets

__all__ = ["command_env", "is_secret_name"]

_PARTS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDS", "COOKIE",
          "PRIVATE", "CONNECTION_STRING", "CONNSTR")
_WORDS = frozenset({"AUTH", "OAUTH", "PASS", "PWD", "DSN", "SALT", "WEBHOOK", "SAS"})
_PREFIXES = ("OP_SESSION_",)
_NAMES = frozenset({"BW_SESSION"})
_KEEP = frozenset({"PWD", "OLDPWD"})
_SPLIT = re.compile(r"[^A-Z0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret (see the module's rules)."""
    upper = name.upper()
    if upper in _KEEP:
        return False
    if upper in _NAMES or upper.startswith(_PREFIXES) or any(p in upper for p in _PARTS):
        return True
    return any(word in _WORDS for word in _SPLIT.split(upper))


def command_env(environ: Mapping[str, str], *, passed: Iterable[str] = (),
                withheld: Iterable[str] = ()) -> dict[str, str]:
    """`environ` without the variables that look like secrets, but with the `passed` ones."""
    keep = set(passed)
    drop = set(withheld) - keep
    return {name: value for name, value in environ.items()
            if name in keep or (name not in drop and not is_secret_name(name)
                                and not find_secrets(value))}

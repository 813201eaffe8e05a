"""Every shell rule in one place: the one lexer, what a grant covers, and how risky a command is.

- `lexer`: splits a command line as a POSIX shell would (words, operators, nested commands,
  here-document bodies); both the grants and the classifier read commands through it.
- `programs`: the shared tables of what programs are and run (shells, interpreters, programs
  that run the rest of their words, …).
- `grant_prefix` / `explain_prefix` (`prefix`, with `grant_options`, `subcommands`): what
  `[a] always` would grant for a call, or why nothing.
- `grantability` (`grantability`): whether a call can be granted and why not, decided once by
  the Session; `ApprovalGrant`, what a grant stores and matches.
- `classify_command` (`classify`, with `rules`, `git_rules`, `scripts`, `context`): a command's
  tier, 3 (ask) or `DESTRUCTIVE` (4: ask every time, never granted or auto-approved).
"""

from engine_adapter.shell.classify import (
    ASK,
    DESTRUCTIVE,
    EDIT,
    Classification,
    classify_command,
)
from engine_adapter.shell.grantability import (
    MAX_GRANTABLE_TIER,
    ApprovalGrant,
    Grantability,
    grantability,
    grantability_off_loop,
)
from engine_adapter.shell.lexer import ShellSyntaxError, SimpleCommand, Word, lex, simple_commands
from engine_adapter.shell.prefix import (
    UNGRANTABLE_TOOLS,
    PrefixVerdict,
    explain_prefix,
    grant_prefix,
)
from engine_adapter.shell.programs import program_family

__all__ = [
    "ASK",
    "DESTRUCTIVE",
    "EDIT",
    "MAX_GRANTABLE_TIER",
    "UNGRANTABLE_TOOLS",
    "ApprovalGrant",
    "Classification",
    "Grantability",
    "PrefixVerdict",
    "ShellSyntaxError",
    "SimpleCommand",
    "Word",
    "classify_command",
    "explain_prefix",
    "grant_prefix",
    "grantability",
    "grantability_off_loop",
    "lex",
    "program_family",
    "simple_commands",
]

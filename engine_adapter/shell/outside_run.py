"""The classifier's rules for programs that act outside this run: a terminal multiplexer the
human is sitting in, the service manager, the desktop bus, other processes, containers and
clusters.

A command of these, even one run in the sandbox, reaches a process that is not a child of the
command (through a socket, a daemon or a signal) and acts there, with that process's rights and
outside the run's view: `tmux run-shell`, `tmux send-keys` into the human's shell,
`systemctl --user start`, `busctl call … StartUnit`, `docker run -v /:/host`, `docker exec`,
`kubectl exec`, `pkill`. Each program's read-only verbs stay tier 3 (`tmux ls`,
`systemctl status`, `docker ps`, `kubectl get`); every other verb is tier 4 (an unknown verb
too: the rule lists what is harmless, not what is dangerous).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine_adapter.shell.context import has_long, has_short, non_options
from engine_adapter.shell.lexer import Word

__all__ = ["outside_run"]


def outside_run(family: str, args: list[Word]) -> str | None:
    """The tier-4 reason for `family ARGS` acting outside this run, if it does."""
    rule = _RULES.get(family)
    return rule(family, args) if rule is not None else None


def _verbs(args: Sequence[Word], value_short: str = "", value_long: Sequence[str] = ()
           ) -> list[Word]:
    """The operands of a call, skipping the values of the options that take one (`-t x`,
    `--type x`; `--type=x` and `-tx` carry their own)."""
    found: list[Word] = []
    skip = False
    for word in args:
        text = word.text
        if skip:
            skip = False
        elif text == "--":
            continue
        elif text.startswith("--"):
            skip = "=" not in text and text[2:] in value_long
        elif text.startswith("-") and len(text) > 1:
            skip = text[-1] in value_short
        else:
            found.append(word)
    return found


def _first(words: Sequence[Word]) -> str:
    return words[0].text.lower() if words else ""


# -- terminal multiplexers ---------------------------------------------------------------------

# tmux commands that only read (their aliases too). Anything else — run-shell, send-keys,
# new-window, split-window, respawn-pane, new-session, source-file, set-option, pipe-pane, an
# abbreviation tmux would expand — acts in the human's terminal.
_TMUX_READS = frozenset({
    "ls", "list-sessions", "lsw", "list-windows", "lsp", "list-panes", "lsc", "list-clients",
    "lsk", "list-keys", "lscm", "list-commands", "lsb", "list-buffers", "has", "has-session",
    "show", "show-options", "showw", "show-window-options", "showenv", "show-environment",
    "show-hooks", "showmsgs", "show-messages", "info", "server-info",
})


def _tmux(family: str, args: list[Word]) -> str | None:
    if any("#(" in w.text or w.opaque for w in args):
        return "tmux runs a command (a #(…) format, or words known only when it runs)"
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text in ("-V", "--version"):
            return None
        if any(letter in text[1:] for letter in "fcC"):
            return f"tmux {text} runs commands (a config file, a shell command or control mode)"
        i += 2 if text in ("-L", "-S", "-T") else 1
    commands: list[str] = []
    start = True
    for word in args[i:]:
        pieces = word.text.split(";")
        if start and pieces[0]:
            commands.append(pieces[0].lower())
        start = len(pieces) > 1  # a `;` ends a tmux command: the next word starts one
        if start and pieces[-1]:
            commands.append(pieces[-1].lower())
            start = False
    if not commands:
        return "tmux starts a session outside this run"
    bad = next((c for c in commands if c not in _TMUX_READS), None)
    if bad is not None:
        return f"tmux {bad} acts in a terminal outside this run"
    return None


_SCREEN_READS = frozenset({"-ls", "-list", "-v", "-version", "--version", "-h", "--help"})


def _screen(family: str, args: list[Word]) -> str | None:
    if args and all(w.text in _SCREEN_READS for w in args):
        return None
    return f"{family} starts or drives a terminal session outside this run"


def _zellij(family: str, args: list[Word]) -> str | None:
    if _first(_verbs(args)) in ("ls", "list-sessions") or any(
            w.text in ("-V", "--version", "-h", "--help") for w in args):
        return None
    return "zellij starts or drives a terminal session outside this run"


def _always(what: str) -> Callable[[str, list[Word]], str | None]:
    def rule(family: str, args: list[Word]) -> str | None:
        if any(w.text in ("--help", "-h", "--version", "-V") for w in args) and len(args) == 1:
            return None
        return f"{family} {what}"
    return rule


# -- services, the bus, desktop settings --------------------------------------------------------

_SYSTEMCTL_READS = frozenset({
    "status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
    "list-jobs", "list-dependencies", "list-machines", "list-paths", "list-automounts",
    "is-active", "is-enabled", "is-failed", "is-system-running", "get-default",
    "show-environment", "help",
})
_SYSTEMCTL_VALUES = ("type", "property", "state", "lines", "output", "signal", "kill-whom",
                     "job-mode", "what", "timestamp", "root", "image", "preset-mode",
                     "message", "boot-loader-entry", "boot-loader-menu", "reboot-argument",
                     "drop-in", "when")
_ELSEWHERE = ("--host", "--machine")


def _elsewhere(args: list[Word], letters: str = "HM") -> bool:
    return has_short(args, letters) or has_long(args, *_ELSEWHERE)


def _service_manager(reads: frozenset[str], values: Sequence[str] = (),
                     value_short: str = "") -> Callable[[str, list[Word]], str | None]:
    def rule(family: str, args: list[Word]) -> str | None:
        if _elsewhere(args):
            return f"{family} on another machine (-H/--host, -M/--machine)"
        verb = _first(_verbs(args, value_short, values))
        if not verb or verb in reads:
            return None
        return f"{family} {verb} acts outside this run (services, the bus or the session)"
    return rule


def _service(family: str, args: list[Word]) -> str | None:
    operands = non_options(args)
    if any(w.text == "--status-all" for w in args) or (
            len(operands) >= 2 and operands[1].text == "status"):
        return None
    return f"{family} starts, stops or changes a service outside this run"


def _qdbus(family: str, args: list[Word]) -> str | None:
    if len(non_options(args)) >= 3:
        return f"{family} calls a method on the desktop bus"
    return None


def _settings(writes: frozenset[str]) -> Callable[[str, list[Word]], str | None]:
    def rule(family: str, args: list[Word]) -> str | None:
        verb = _first(non_options(args))
        if verb in writes:
            return f"{family} {verb} changes the desktop's settings (which can start programs)"
        return None
    return rule


def _xdotool(family: str, args: list[Word]) -> str | None:
    verbs = [w.text.lower() for w in non_options(args)]
    if verbs and all(v.startswith("get") or v in ("search", "version", "help") for v in verbs[:1]
                     ) and not any(v in _XDOTOOL_ACTS for v in verbs):
        return None
    return f"{family} types or clicks into other windows"


_XDOTOOL_ACTS = frozenset({"type", "key", "keydown", "keyup", "exec", "click", "mousedown",
                           "mouseup", "mousemove", "windowactivate", "windowfocus", "windowkill",
                           "windowclose", "set_desktop", "behave", "behave_screen_edge"})


# -- other processes -------------------------------------------------------------------------

def _killer(family: str, args: list[Word]) -> str | None:
    if any(w.text in ("-l", "-L", "--list", "--table", "-V", "--version", "--help") for w in args):
        return None
    if family == "kill":
        rest = args
        if rest and rest[0].text in ("-s", "-n", "--signal"):
            rest = rest[2:]
        elif rest and rest[0].text.startswith("-") and rest[0].text != "--":
            rest = rest[1:]  # a signal: `-9`, `-KILL`, `-SIGTERM`
        if rest and all(w.text.startswith("%") and not w.opaque for w in rest):
            return None  # `kill %1`: a job of this very shell
    return f"{family} signals processes outside this run"


def _attacher(family: str, args: list[Word]) -> str | None:
    if has_short(args, "p") or has_long(args, "--pid", "--attach", "--attach-pid",
                                        "--attach-name") or any(
            w.text.startswith("-attach") for w in args):
        return f"{family} attaches to a process outside this run (it can read or change it)"
    return None


# -- containers and clusters -------------------------------------------------------------------

_DOCKER_GLOBAL_VALUES = frozenset({"-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"})
_DOCKER_ELSEWHERE = ("--host", "--context", "--config", "--remote", "--url", "--connection",
                     "--identity")
# Verbs that act on a container or daemon already running outside this run.
_DOCKER_ACTS = frozenset({"exec", "attach", "cp", "start", "restart", "unpause", "kill", "stop",
                          "pause", "update", "debug"})
_DOCKER_RUNS = frozenset({"run", "create"})
# `docker run`/`create` options that take a value (so the image is found after them).
_RUN_VALUE_SHORT = "acehlmpuvw"
_RUN_FLAGS = frozenset({
    "--rm", "--init", "--interactive", "--tty", "--detach", "--privileged", "--read-only",
    "--no-healthcheck", "--oom-kill-disable", "--publish-all", "--quiet", "--help",
    "--disable-content-trust", "--sig-proxy", "--use-api-socket",
})
# What lets a container reach the host: mounts, devices, privileges, the host's namespaces,
# and a container left running after the command (outside this run).
_RUN_REACH = ("--volume", "--mount", "--volumes-from", "--privileged", "--cap-add", "--device",
              "--device-cgroup-rule", "--security-opt", "--detach", "--restart", "--gpus",
              "--use-api-socket", "--group-add")
_RUN_NAMESPACES = ("--pid", "--network", "--net", "--ipc", "--uts", "--userns", "--cgroupns")


def _run_options(args: list[Word]) -> list[Word]:
    """The options of `docker run` before the image (what follows it is the container's)."""
    options: list[Word] = []
    skip = False
    for word in args:
        text = word.text
        if skip:
            options.append(word)
            skip = False
        elif text.startswith("--"):
            options.append(word)
            skip = "=" not in text and text not in _RUN_FLAGS
        elif text.startswith("-") and len(text) > 1:
            options.append(word)
            skip = text[-1] in _RUN_VALUE_SHORT
        else:
            break
    return options


def _docker_run(what: str, args: list[Word]) -> str | None:
    options = _run_options(args)
    if has_short(options, "vd") or any(
            w.text.split("=", 1)[0] in _RUN_REACH for w in options):
        return (f"{what} gives a container the host's files, devices or privileges, or leaves "
                "it running outside this run")
    for j, word in enumerate(options):
        name, eq, value = word.text.partition("=")
        if name in _RUN_NAMESPACES:
            if not eq:
                value = options[j + 1].text if j + 1 < len(options) else "host"
            if value == "host" or value.startswith("container:"):
                return f"{what} shares the host's namespaces ({name}={value})"
    return None


def _docker(family: str, args: list[Word]) -> str | None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        name = text.split("=", 1)[0]
        if name in ("-H", "-c", "-r") or has_long([args[i]], *_DOCKER_ELSEWHERE):
            return f"{family} talks to another daemon ({name})"
        i += 2 if name in _DOCKER_GLOBAL_VALUES and "=" not in text else 1
    rest = args[i:]
    if family == "docker-compose":
        return _compose(_first(_verbs(args, "fp", _COMPOSE_VALUES)))
    verb, tail, group = _first(rest), rest[1:], ""
    if verb == "compose":
        return _compose(_first(_verbs(tail, "fp", _COMPOSE_VALUES)))
    if verb in ("container", "stack", "plugin", "context", "swarm") and tail:
        group, verb, tail = verb, _first(tail), tail[1:]
    if verb in _DOCKER_RUNS:
        return _docker_run(f"{family} {verb}", tail)
    if verb in _DOCKER_ACTS:
        return f"{family} {verb} acts on a container outside this run"
    if group == "plugin" and verb in ("install", "enable", "upgrade"):
        return f"{family} plugin {verb} runs a privileged plugin outside this run"
    if group in ("context", "swarm") and verb not in ("ls", "list", "inspect", "show", "ca"):
        return f"{family} {group} {verb} changes which daemon later commands reach"
    return None


_COMPOSE_ACTS = frozenset({"up", "run", "exec", "start", "restart", "create", "cp", "attach",
                           "unpause", "kill", "stop", "pause", "watch"})


_COMPOSE_VALUES = ("file", "project-name", "project-directory", "env-file", "profile", "ansi",
                   "progress", "parallel")


def _compose(verb: str) -> str | None:
    if verb in _COMPOSE_ACTS:
        return (f"compose {verb} starts or acts on containers outside this run, with the "
                "mounts and privileges its file says")
    return None


_KUBECTL_VALUES = ("namespace", "context", "kubeconfig", "server", "as", "as-group", "as-uid",
                   "token", "cluster", "user", "request-timeout", "cache-dir")
_KUBECTL_ACTS = frozenset({"exec", "cp", "debug", "attach", "run", "port-forward", "proxy",
                           "rsh", "rsync", "drain"})


def _kubectl(family: str, args: list[Word]) -> str | None:
    verb = _first(_verbs(args, "ns", _KUBECTL_VALUES))
    if verb in _KUBECTL_ACTS:
        return f"{family} {verb} runs or copies into a cluster's containers outside this run"
    return None


_RULES: dict[str, Callable[[str, list[Word]], str | None]] = {
    "tmux": _tmux, "screen": _screen, "zellij": _zellij,
    "byobu": _always("drives a terminal session outside this run"),
    "dtach": _always("runs a detached session outside this run"),
    "abduco": _always("runs a detached session outside this run"),
    "systemctl": _service_manager(_SYSTEMCTL_READS, _SYSTEMCTL_VALUES, "tpnos"),
    "loginctl": _service_manager(frozenset({"list-sessions", "list-users", "list-seats",
                                            "session-status", "show-session", "user-status",
                                            "show-user", "seat-status", "show-seat", "help"}),
                                 ("property", "lines", "output"), "pno"),
    "machinectl": _service_manager(frozenset({"list", "status", "show", "list-images",
                                              "image-status", "show-image", "help"}),
                                   ("property", "lines", "output"), "pno"),
    "busctl": _service_manager(frozenset({"list", "status", "tree", "introspect",
                                          "get-property", "monitor", "capture", "help"})),
    "gdbus": _service_manager(frozenset({"introspect", "monitor", "wait", "help"})),
    "dbus-send": _always("sends a message on the desktop or system bus"),
    "qdbus": _qdbus,
    "service": _service, "rc-service": _service,
    "gsettings": _settings(frozenset({"set", "reset", "reset-recursively"})),
    "dconf": _settings(frozenset({"write", "reset", "load", "update", "compile"})),
    "xdotool": _xdotool,
    "ydotool": _always("types or clicks into other windows"),
    "wtype": _always("types into other windows"),
    "xte": _always("types or clicks into other windows"),
    "nsenter": _always("enters another process's namespaces (outside this run's sandbox)"),
    "reptyr": _always("takes over a process outside this run"),
    "gcore": _always("dumps the memory of a process outside this run"),
    "gdb": _attacher, "lldb": _attacher, "strace": _attacher, "ltrace": _attacher,
    "kill": _killer, "pkill": _killer, "killall": _killer, "skill": _killer,
    "xkill": _killer,
    "docker": _docker, "docker-compose": _docker,
    "kubectl": _kubectl, "oc": _kubectl,
}

"""Every key binding of the cockpit, declared once.

Each `KeySpec` has an `id` (what a user keymap names, as `[keymap]` in `config.toml`), a default
key, the action it runs and the text the footer and the `?` help screen show. Widgets and apps
take their `BINDINGS` from `bindings(scope)`, and the help screen lists `KEYS` with the user's
keymap applied, so the footer, the help and a remapping can never disagree. Every label a widget
shows for a key ("press i to …", `[y]`) comes from `key_label`, so a remapped key is named as
remapped. A few keys are Textual's own (tab, ctrl+p, …): they are listed (`textual=True`) for
the help only, and cannot be remapped.

Every binding of both apps is in the one table, `KEYS`, by scope: the live run's (`app`), both
apps' (`general`), the transcript's, the pager's and the grants screen's, talking to the agent
(`steer`, `composer`, `queue`, `question`: the message box, its queue and an agent's question),
and the replay viewer's (`replay`, `picker`). Nothing is registered by importing a module.

`ctrl+enter` reaches an application only from terminals that speak the kitty keyboard protocol
(kitty, foot, WezTerm, Ghostty; not tmux 3.3, xterm or GNOME's terminal, which send a plain
enter): `ctrl+j` (a line feed, which every terminal sends) does the same everywhere, and is the
one the footer shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.app import App
from textual.binding import Binding, BindingType
from textual.keys import format_key

__all__ = ["ANSWER_ACTIONS", "FOOTER_FIRST", "KEYS", "PICKER_SCOPE", "REPLAY_SCOPE", "STEER_SCOPES",
           "KeySpec",
           "bindings", "effective_key", "help_rows", "key_display", "key_label",
           "unknown_keymap_ids"]

STEER_SCOPES = ("steer", "composer", "queue", "question")
"""The scopes of talking to the agent: app-wide, the message box, its queue, a question."""
REPLAY_SCOPE = "replay"
"""The replay viewer's scope."""
PICKER_SCOPE = "picker"
"""The journal picker's scope (its other keys are the pager's)."""
ANSWER_ACTIONS = frozenset({"approve", "approve_always", "deny", "grant_scope", "scope_back",
                            "cancel_run", "edit_proposal"})
"""The run's actions whose keys still work from a message box left empty by a send, where they
apply (the focus stays there after a task is sent; see `ComposerInput.answer_keys`): the keys
that answer a pending approval, and escape's "back" and "cancel run"; any other letter there is
text, and so is every key once the human typed in the box."""


@dataclass(frozen=True)
class KeySpec:
    """One binding: `id` is stable (keymaps name it), `key` is the default key.

    `textual=True` marks a key Textual itself binds (tab, ctrl+p, …): listed in the help, never
    bound here, not remappable."""

    id: str
    key: str
    action: str
    description: str
    scope: str
    show: bool = True
    priority: bool = False
    help: str = ""
    key_display: str | None = None
    textual: bool = False


KEYS: list[KeySpec] = [
    # Live run: approvals and control (app scope: they work whatever has focus).
    KeySpec("approve", "y", "approve", "allow once", "app",
            help="Allow the oldest pending tool call, this once."),
    KeySpec("approve-always", "a", "approve_always", "always allow", "app",
            help="Allow it and grant calls with the same program prefix: then choose how "
            "long (s, p or u; a again = this session). On a call that cannot be granted it "
            "says why."),
    KeySpec("deny", "n", "deny", "deny", "app", help="Deny the oldest pending tool call."),
    KeySpec("edit-proposal", "e", "edit_proposal", "edit it", "app",
            help="On an edit under review (ask mode): open the proposed text in $VISUAL or "
            "$EDITOR; what you save is accepted and written instead, and the agent is told the "
            "file differs from its proposal. A non-zero exit or an unchanged file accepts "
            "nothing."),
    KeySpec("grant-session", "s", "grant_scope('session')", "this session", "app",
            help="After a: keep the grant for this session (forgotten when cockpit quits)."),
    KeySpec("grant-project", "p", "grant_scope('project')", "this project", "app",
            help="After a: save the grant for this project (its real path) in your config "
            "directory, never in the workspace."),
    KeySpec("grant-user", "u", "grant_scope('user')", "every project", "app",
            help="After a: save the grant for every project (your user scope)."),
    KeySpec("grant-back", "escape", "scope_back", "back", "app", key_display="esc",
            help="After a: back to the approval, nothing granted."),
    KeySpec("cancel", "escape", "cancel_run", "cancel run", "app", key_display="esc",
            help="Cancel the run (press twice within 2 seconds)."),
    KeySpec("quit", "ctrl+q", "quit_cockpit", "quit", "app", priority=True,
            help="Quit (asks first while the run is live; quitting cancels it cleanly)."),
    KeySpec("help", "question_mark", "help", "help", "app", key_display="?",
            help="Show this help."),
    KeySpec("grants", "g", "grants", "grants", "app",
            help="Every grant and deny rule in force, with its scope and last use; revoke one."),
    KeySpec("mode", "m", "cycle_mode", "mode", "app",
            help="Switch the permission mode: ask (every edit and command asks, with its "
            "diff) → accept edits (edits in the workspace run, commands ask) → auto (what the "
            "sandbox contains runs unasked; tier 4 asks) → plan (read-only). Shown in the "
            "status line and journaled; a call already asking keeps its question."),
    # Everywhere (both apps): the side panel on a narrow terminal, panels that outgrew their
    # room, and Textual's own keys.
    KeySpec("side-panel", "v", "toggle_side_panel", "checks & grants", "general",
            help="Show or hide verification and grants over the transcript (on a terminal "
                 "narrower than 110 columns, where they are summed up in the status line)."),
    # Priority keys: the message box (where the focus stays) selects text with them otherwise;
    # they apply only while a panel has more than it shows.
    KeySpec("panel-down", "shift+down", "scroll_panel(1)", "more below", "general",
            priority=True,
            help="Scroll the approval bar or the end panel down (when it shows "
                 "\"more below\")."),
    KeySpec("panel-up", "shift+up", "scroll_panel(-1)", "back up", "general", show=False,
            priority=True,
            help="Scroll the approval bar or the end panel back up."),
    KeySpec("palette", "ctrl+p", "command_palette", "palette", "general", textual=True,
            help="The command palette (themes, keys, quit)."),
    KeySpec("next-field", "tab", "app.focus_next", "next field", "general", textual=True,
            help="Move the focus on (e.g. to the next-task input once a run has ended)."),
    KeySpec("previous-field", "shift+tab", "app.focus_previous", "previous field", "general",
            textual=True, help="Move the focus back."),
    KeySpec("copy", "ctrl+c", "screen.copy_text", "copy", "general", textual=True,
            help="Copy the selected text."),
    # Transcript: moving through items.
    KeySpec("item-up", "up", "cursor_up", "previous item", "transcript", show=False,
            help="Select the previous transcript item."),
    KeySpec("item-down", "down", "cursor_down", "next item", "transcript", show=False,
            help="Select the next transcript item."),
    KeySpec("item-first", "home", "cursor_first", "first item", "transcript", show=False,
            help="Select the first item."),
    KeySpec("item-last", "end", "cursor_last", "follow", "transcript", show=False,
            help="Select the last item and follow the run."),
    KeySpec("page-up", "pageup", "page_up", "page up", "transcript", show=False,
            help="Scroll up a page."),
    KeySpec("page-down", "pagedown", "page_down", "page down", "transcript", show=False,
            help="Scroll down a page."),
    KeySpec("expand", "enter", "expand", "expand", "transcript",
            help="Expand or collapse the item; long output opens in a pager."),
    KeySpec("copy-item", "c", "copy_item", "copy", "transcript",
            help="Copy the selected item to the clipboard (a reply's text, a command, a "
                 "diff; OSC 52, which works over ssh and in tmux with set-clipboard on)."),
    KeySpec("inspect", "i", "inspect", "raw events", "transcript",
            help="Show the raw events behind the selected item."),
    KeySpec("rewind", "b", "rewind_turn", "rewind here", "transcript",
            help="On a turn's header (up/down to the turn's first item): show what rewinding "
                 "the workspace to the start of that turn would restore, remove and bring "
                 "back, with the diffs, and ask (b again rewinds, esc changes nothing). Not "
                 "while a task runs. The built-in engine's next task then continues from that "
                 "turn."),
    # Pager, inspector, help and the other screens over the run: closing them.
    KeySpec("close", "escape", "close", "close", "pager", key_display="esc",
            help="Close the pager or inspector."),
    KeySpec("close-q", "q", "close", "close", "pager", show=False, help="Close."),
    # The pager's text: search and wrapping.
    KeySpec("pager-search", "slash", "search", "search", "pager-text", key_display="/",
            help="Search the text (smart case: lower case matches any case)."),
    KeySpec("pager-next", "n", "next_match(1)", "next match", "pager-text", show=False,
            help="The next match."),
    KeySpec("pager-previous", "N", "next_match(-1)", "previous match", "pager-text",
            show=False, help="The previous match."),
    KeySpec("pager-wrap", "w", "toggle_wrap", "wrap", "pager-text",
            help="Wrap long lines (on by default) or scroll sideways (left, right)."),
    # The grants screen.
    KeySpec("revoke", "delete", "revoke", "revoke", "grants", key_display="del",
            help="Revoke the selected grant or deny rule (saved ones are removed from their "
            "file)."),
    KeySpec("grants-close", "escape", "close", "close", "grants", key_display="esc",
            help="Close the grants screen."),
    KeySpec("grants-close-q", "q", "close", "close", "grants", show=False, help="Close."),
    # Talking to the agent, app-wide while a conversation can go on.
    KeySpec("compose", "t", "focus_composer", "message", "steer",
            help="Type a message to the agent: while it works, the message is queued and sent "
                 "when its turn ends."),
    KeySpec("command", "slash", "start_command", "command", "steer", key_display="/",
            help="Start typing one of the agent's commands (/review, /compact, …), completed "
                 "with its description."),
    # In the message box.
    KeySpec("send", "enter", "submit", "send", "composer", show=False,
            help="Send the message (queued while the agent works), or start the next task; a "
                 "line that ends in a backslash (\\) becomes a new line instead."),
    KeySpec("newline", "shift+enter,alt+enter", "newline", "new line", "composer",
            key_display="shift+enter", show=False,
            help="A new line in the message (terminals with the kitty keyboard protocol tell "
                 "shift+enter apart; everywhere else end the line with \\ and press enter, "
                 "or paste: a paste keeps every line)."),
    KeySpec("send-now", "ctrl+enter", "send_now", "send now", "composer", show=False,
            help="Stop the agent's turn and send the message at once (ctrl+enter reaches the "
                 "cockpit only from terminals with the kitty keyboard protocol: use ctrl+j)."),
    KeySpec("send-now-anywhere", "ctrl+j", "send_now", "send now (stops the turn)", "composer",
            help="Stop the agent's turn and send the message at once (works in every "
                 "terminal)."),
    KeySpec("complete-next", "down", "complete_move(1)", "next command", "composer",
            show=False, help="The next command (or file, after @) in the completion list."),
    KeySpec("complete-previous", "up", "complete_move(-1)", "previous", "composer", show=False,
            help="The previous command in the completion list, or the queued messages; "
                 "else, on the box's first line, this project's earlier prompts (down goes "
                 "back to what you typed)."),
    KeySpec("history-search", "ctrl+r", "history_search", "search history", "composer",
            show=False, help="Search this project's earlier prompts (every word typed "
                             "matches); enter or tab takes one, ctrl+r again goes older."),
    KeySpec("complete", "tab", "complete", "complete", "composer",
            help="Complete the highlighted command, or the highlighted file after @ (it goes "
                 "in as @path; its contents go to the agent with the message)."),
    KeySpec("leave-box", "escape", "leave", "leave", "composer", key_display="esc",
            help="Close the completion list; else leave the message box (or, typing a "
                 "denial's reason, go back without denying). In a box left empty by a send, "
                 "while the run is live, escape is the run's (back from the scope step, or "
                 "cancel)."),
    # On a queued message.
    KeySpec("unqueue", "escape", "unqueue", "remove", "queue", key_display="esc",
            help="Take back the highlighted queued message before it is sent."),
    KeySpec("queue-back", "tab", "back_to_box", "back", "queue",
            help="Back to the message box."),
    # In an agent's question.
    KeySpec("answer", "ctrl+s", "send_answer", "send answer", "question",
            help="Send the answer to the agent's question (enter in the last text field "
                 "too)."),
    KeySpec("decline", "escape", "decline_question", "decline", "question", key_display="esc",
            help="Decline to answer the agent's question."),
    KeySpec("open-link", "o", "open_link", "open link", "question",
            help="Open the link the agent's question shows in your browser (http and https "
                 "only) and tell the agent it was opened. Nothing opens without this key."),
    # The replay viewer.
    KeySpec("replay-play", "space", "play_pause", "play/pause", "replay",
            help="Play from here, paced by the events' timestamps (long pauses shortened)."),
    KeySpec("replay-faster", "plus", "speed(1)", "faster", "replay", key_display="+",
            show=False, help="Play faster."),
    KeySpec("replay-slower", "minus", "speed(-1)", "slower", "replay", key_display="-",
            show=False, help="Play slower."),
    KeySpec("replay-back", "left", "step(-1)", "back", "replay", key_display="←",
            priority=True, help="One event back (of the filtered types, with a filter)."),
    KeySpec("replay-forward", "right", "step(1)", "forward", "replay", key_display="→",
            priority=True, help="One event forward."),
    KeySpec("replay-prev-tool", "left_square_bracket", "jump('tool', -1)", "prev tool",
            "replay", key_display="[", show=False, help="Previous tool call."),
    KeySpec("replay-next-tool", "right_square_bracket", "jump('tool', 1)", "next tool",
            "replay", key_display="]", show=False, help="Next tool call."),
    KeySpec("replay-prev-approval", "left_curly_bracket", "jump('approval', -1)",
            "prev approval", "replay", key_display="{", show=False,
            help="Previous approval request."),
    KeySpec("replay-next-approval", "right_curly_bracket", "jump('approval', 1)",
            "next approval", "replay", key_display="}", show=False,
            help="Next approval request."),
    KeySpec("replay-next-error", "e", "jump('error', 1)", "next error", "replay",
            help="Next error, failure or denial."),
    KeySpec("replay-prev-error", "E", "jump('error', -1)", "prev error", "replay",
            show=False, help="Previous error, failure or denial."),
    KeySpec("replay-first", "home", "first", "first", "replay", priority=True, show=False,
            help="The first event."),
    KeySpec("replay-last", "end", "last", "last", "replay", priority=True, show=False,
            help="The last event (and, on a journal being written, follow it)."),
    KeySpec("replay-search", "slash", "search", "search", "replay", key_display="/",
            help="Search the journal; shows the match count."),
    KeySpec("replay-next-match", "n", "match(1)", "next match", "replay", show=False,
            help="Next search match."),
    KeySpec("replay-prev-match", "N", "match(-1)", "prev match", "replay", show=False,
            help="Previous search match."),
    KeySpec("replay-filter", "f", "filter", "filter", "replay",
            help="Choose the event types that stepping and playing visit."),
    # Not a priority key: with a transcript item selected (up/down), enter expands it, as in
    # the live view; with none, it shows the event under the timeline's cursor.
    KeySpec("replay-inspect", "enter", "inspect_event", "raw event", "replay",
            help="Show the raw event under the cursor (with a transcript item selected, "
                 "enter expands the item instead, and i shows the events behind it)."),
    KeySpec("replay-resume", "r", "resume", "resume", "replay",
            help="Continue this agent run's conversation in the live cockpit (closes the "
                 "viewer; like `cockpit resume JOURNAL`)."),
    KeySpec("replay-help", "question_mark", "help", "help", "replay", key_display="?",
            help="Show every key."),
    KeySpec("replay-quit", "q", "quit_replay", "quit", "replay",
            help="Close the viewer."),
    KeySpec("replay-quit-ctrl", "ctrl+q", "quit_replay", "quit", "replay", show=False,
            priority=True, help="Close the viewer."),
    # The journal picker.
    KeySpec("picker-resume", "r", "resume", "resume", "picker",
            help="Continue the selected agent run's conversation in the live cockpit."),
    # The fleet view (`cockpit attach` with no run): y, a, n answer the inbox's ask.
    KeySpec("fleet-retry", "r", "retry_hosts", "retry hosts", "fleet",
            help="Try every host that cannot be reached again now (else it is tried again "
                 "after a pause that doubles, up to a minute)."),
]

FOOTER_FIRST = ("approve", "approve-always", "deny", "grant-session", "grant-project",
                "grant-user", "grant-back")
"""The ids the footer shows before any other while they apply: the keys that answer a waiting
request come first, so a narrow terminal cuts the others (`^q quit`, `v …`), never `n deny`."""

_SCOPE_TITLES = {"app": "Run", "general": "Everywhere", "transcript": "Transcript",
                 "pager": "Pager and inspector", "pager-text": "Pager and inspector",
                 "grants": "Grants screen", "steer": "Talking to the agent",
                 "composer": "Message box", "queue": "Queued messages",
                 "question": "Agent's question", "replay": "Replay",
                 "picker": "Journal picker", "fleet": "Fleet view"}


def bindings(scope: str, *, ids: Iterable[str] | None = None) -> list[BindingType]:
    """The Textual `Binding`s of one scope (only `ids`, when given), each carrying its id."""
    wanted = set(ids) if ids is not None else None
    return [
        Binding(spec.key, spec.action, spec.description, show=spec.show, id=spec.id,
                priority=spec.priority, key_display=spec.key_display, tooltip=spec.help)
        for spec in KEYS
        if spec.scope == scope and not spec.textual and (wanted is None or spec.id in wanted)
    ]


def effective_key(spec: KeySpec, keymap: Mapping[str, str] | None = None) -> str:
    """The key(s) that run `spec` once a user keymap is applied (Textual's key names)."""
    if keymap and spec.id in keymap and not spec.textual:
        return keymap[spec.id]
    return spec.key


def key_display(keys: str, app: object = None, *, default: str | None = None) -> str:
    """How `keys` (Textual key names, comma-separated) are shown: `^q`, `esc`, `?`, `a/A`.
    `default` is the spec's own display, used when `keys` is its default key."""
    if default is not None:
        return default
    shown = []
    for key in keys.split(","):
        key = key.strip()
        if not key:
            continue
        if isinstance(app, App):  # the app's own display rule (the footer's)
            shown.append(app.get_key_display(Binding(key, "")))
        else:
            shown.append(format_key(key))
    return "/".join(shown) or keys


def _spec(binding_id: str) -> KeySpec:
    return next(spec for spec in KEYS if spec.id == binding_id)


def _label(spec: KeySpec, keymap: Mapping[str, str] | None, app: object = None) -> str:
    keys = effective_key(spec, keymap)
    return key_display(keys, app, default=spec.key_display if keys == spec.key else None)


def key_label(app: object, binding_id: str) -> str:
    """The key that runs binding `binding_id` in `app`, the user's keymap (`app.config`)
    applied, as the footer shows it: what a hint such as "press i to …" or `[y]` must name."""
    return _label(_spec(binding_id), getattr(getattr(app, "config", None), "keymap", None), app)


def unknown_keymap_ids(keymap: Mapping[str, str]) -> list[str]:
    """Problems with a user keymap, one sentence each: ids no binding has, and Textual's own
    keys (which cannot be remapped)."""
    by_id = {spec.id: spec for spec in KEYS}
    problems = []
    unknown = sorted(name for name in keymap if name not in by_id)
    if unknown:
        problems.append("[keymap] in config.toml names unknown key ids: "
                        + ", ".join(repr(name) for name in unknown[:10])
                        + (f" (+{len(unknown) - 10} more)" if len(unknown) > 10 else "")
                        + "; the ids are listed in cockpit/keys.py (e.g. approve, deny, "
                          "cancel)")
    fixed = sorted(name for name in keymap if name in by_id and by_id[name].textual)
    if fixed:
        problems.append("[keymap] cannot remap Textual's own keys: "
                        + ", ".join(repr(name) for name in fixed))
    return problems


def help_rows(scopes: Iterable[str] | None = None,
              keymap: Mapping[str, str] | None = None,
              app: object = None) -> list[tuple[str, str, str]]:
    """(section, key, what it does) rows for the help screen, in declaration order.

    Each key is listed once: a key already listed by an earlier scope (which wins: the replay
    viewer's priority keys over the transcript's) is left out, and the keys of one action with
    one meaning share a row ("q/^q")."""
    wanted = list(scopes) if scopes is not None else list(_SCOPE_TITLES)
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    merged: dict[tuple[str, str], int] = {}  # (scope, action) -> its row
    for scope in wanted:
        for spec in KEYS:
            if spec.scope != scope:
                continue
            keys = {key.strip() for key in effective_key(spec, keymap).split(",")}
            if keys <= seen:
                continue
            seen |= keys
            label = _label(spec, keymap, app)
            what = spec.help or spec.description
            at = merged.get((scope, spec.action))
            if at is not None:  # another key for the same action: one row
                section, shown, _ = rows[at]
                rows[at] = (section, f"{shown}/{label}", rows[at][2])
                continue
            merged[(scope, spec.action)] = len(rows)
            rows.append((_SCOPE_TITLES.get(scope, scope), label, what))
    return rows

"""`Composer`: the message box under the run — the next task, a message to the agent while it
works (queued, or sent at once), one of the agent's commands completed with its description, a
workspace file mentioned with `@` (a fuzzy list of its files; `tab` or `enter` completes to
`@path`, quoted when the path needs it), and a denial's reason.

It holds no run state of its own: the live app tells it what to show (`show`) and listens to its
messages (`Submitted`, `SendNow`, `Unqueue`, `Reason`, and `FilesWanted`: the `@` list opened
and its file list is missing or from before the last turn; the app lists the files off the loop
and hands them in with `set_files`). While calls may wait for approval and no message can be
sent, it stands by (`standby`): its rows stay reserved, its box cannot take the focus, and `n`
only turns it into the reason box in place — no layout, no restyle of a subtree, so the key's
answer is one small repaint (issue 29). The queue list above the box shows the
queued messages; `escape` on one takes it back. Everything shown that came from an agent (its
commands' names, descriptions and hints) is cleaned and shown as plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events, on, work
from textual.actions import parse as parse_action
from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from cockpit.keys import ANSWER_ACTIONS, KEYS, bindings, effective_key, key_label
from cockpit.styles import palette_for
from cockpit.widgets.file_matches import FileIndex, FileMatch
from cockpit.widgets.safe_text import clean_line
from engine_adapter.files.mentions import escape_all, mention_at, mention_token
from engine_adapter.view import COMMAND_SIGILS, CommandView
from engine_adapter.view import command_token as typed_as

__all__ = ["MESSAGE_LIMIT", "Composer", "command_token", "matching_commands",
           "matching_prompts"]

MESSAGE_LIMIT = 20_000
"""Characters of one message (a task's text): what the box takes, and what the queue keeps."""

MAX_SHOWN = 8  # rows of the completion list
FILES_SHOWN = 10  # files the `@` list offers (it scrolls within the list's rows)
FILES_AT_ONCE = 2_000
"""An `@` list over at most this many files is matched at once (well under a millisecond); a
bigger one in a thread (a keystroke over 20,000 paths costs 5–30 ms: never on the loop), its
rows shown when they come, the newest keystroke's only."""
MAX_ROWS = 6  # rows the box grows to before it scrolls
SHORT_SCREEN = 20  # rows: below this the label takes one line


def command_token(command: CommandView) -> str:
    """What the human types for `command`: `/review`, or a name that has its own sigil
    (codex's skills: `$imagegen`) as it is."""
    return typed_as(command.name)


def matching_commands(commands: Sequence[CommandView], text: str) -> list[CommandView]:
    """The commands `text` is the start of (case-insensitive), or, once a command is typed in
    full and followed by a space, that command alone (its hint and description stay in sight)."""
    if not text or text[0] not in "/" + COMMAND_SIGILS:
        return []
    typed = text.lower()
    whole = [c for c in commands if typed.startswith(command_token(c).lower() + " ")]
    if whole:
        return [max(whole, key=lambda c: len(c.name))]
    return [c for c in commands if command_token(c).lower().startswith(typed)]


def matching_prompts(prompts: Sequence[str], query: str, limit: int = 200) -> list[str]:
    """The earlier prompts that hold every word of `query` (case-insensitive), newest first,
    each once."""
    words = query.lower().split()
    found: list[str] = []
    seen: set[str] = set()
    for prompt in reversed(prompts):
        if prompt in seen:
            continue
        lowered = prompt.lower()
        if all(word in lowered for word in words):
            seen.add(prompt)
            found.append(prompt)
            if len(found) >= limit:
                break
    return found


class ComposerInput(TextArea):
    """The box itself: a multi-line `TextArea` with the composer's keys (they apply only while
    it has the focus, and each only when it can do something: the footer shows just those).

    `enter` sends (`Submitted`), unless the text before the cursor ends in a backslash, which
    becomes a new line (the one new-line key every terminal sends); `shift+enter` (and
    `alt+enter`) insert one where the terminal tells them apart (kitty keyboard protocol). A
    paste keeps every line; one that would take the message over `MESSAGE_LIMIT` is refused,
    and the box says so. It grows with its text up to `MAX_ROWS`, then scrolls. `up` and
    `down` move between lines; on the first line (or with the completion list open) they are
    the composer's (see `Composer.move`).
    """

    BINDINGS = bindings("composer")

    class Submitted(Message):
        """Enter: send `value`."""

        def __init__(self, box: ComposerInput, value: str) -> None:
            super().__init__()
            self.box = box
            self.value = value

        @property
        def control(self) -> ComposerInput:
            """The box that sent it (what `@on(..., "#id")` matches)."""
            return self.box

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         highlight_cursor_line=False, compact=True)
        # Whether an answer key typed here is that key (see `answer_keys`).
        self._answer_keys = False

    @property
    def answer_keys(self) -> bool:
        """Whether the approval keys (`ANSWER_ACTIONS`) work from this box: only while it is
        empty and untouched since a message was sent from it (the focus stays here after a
        send, and `y` then answers the call the task asks for). Once the human types here,
        moves the focus here or empties the box by hand, every key is text until the next
        send: a message that starts with "yes", "no" or "add" never answers a call the human
        was not looking at (they leave the box with escape, then answer)."""
        return self._answer_keys and not self.text

    @answer_keys.setter
    def answer_keys(self, on: bool) -> None:
        if on != self._answer_keys:
            self._answer_keys = on
            if isinstance(self.parent, Composer):
                self.parent.answer_keys_changed()

    # Focused or not, the box differs only in its background (`Composer.colour_box`), set
    # inline: Textual restyles a widget on every focus move (for its `:focus` rules), and for
    # a text area that is it and its many component classes, about a fifth of the `n` key's
    # frame (issue 29: `n` moves the focus into this box, enter and escape move it back).
    def watch_has_focus(self, has_focus: bool) -> None:
        """Recolour, without a restyle (see above). The focus arriving (a key, a click, tab)
        makes the box the human's: its keys are text (`answer_keys`)."""
        if has_focus:
            self._answer_keys = False  # (the label is looked at just below, once)
        composer = self.parent
        if isinstance(composer, Composer):
            composer.colour_box()
            composer.answer_keys_changed()

    @property
    def value(self) -> str:
        """The text in the box."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text[:MESSAGE_LIMIT])
        self.move_cursor(self.document.end)

    @property
    def cursor_position(self) -> int:
        """Where the cursor is, as an offset into `value`."""
        row, column = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + column

    @cursor_position.setter
    def cursor_position(self, offset: int) -> None:
        before = self.text[:max(0, offset)].split("\n")
        self.move_cursor((len(before) - 1, len(before[-1])))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("complete_move", "submit", "newline", "history_search"):
            return True  # (up/down move the cursor when the composer has no use for them)
        composer = self.parent
        if action == "leave" and isinstance(composer, Composer) and self.answer_keys \
                and not composer.completing and not composer.searching \
                and composer.reason_for is None \
                and self._answers("escape"):
            return False  # (escape goes on to the run's binding: back, or cancel)
        if isinstance(composer, Composer):
            return composer.key_applies(action, parameters)
        return True

    async def on_key(self, event: events.Key) -> None:
        """Enter is the binding's (send), never the text area's own new line. While
        `answer_keys` holds (the box empty and untouched since a send), a key that answers a
        pending approval (`y`, `n`, `a`, a scope key) is that key, not text: the focus stays
        in the box after a task is sent, and the approval keys work from there. Every other
        letter is text (the next task is typed, never lost), and so is every key once the
        human typed here."""
        if event.key == "enter" or (self.answer_keys and self._answers(event.key)):
            event.prevent_default()  # (the key goes on to the bindings, not into the text)
        elif event.is_printable or event.key in ("backspace", "delete"):
            self.answer_keys = False  # typed: the box is the human's (before its Changed)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """The box takes printable keys, but not an answer key while `answer_keys` holds (so
        the footer shows it, and the binding runs)."""
        if self.answer_keys and self._answers(key):
            return False
        return super().check_consume_key(key, character)

    def _answers(self, key: str) -> bool:
        """Whether `key` is a run key that applies now (`ANSWER_ACTIONS`: the app's binding
        runs, not the box's). Never while a denial's reason is typed: that box is all text."""
        composer = self.parent
        if isinstance(composer, Composer) and composer.reason_for is not None:
            return False
        keymap = getattr(getattr(self.app, "config", None), "keymap", None)
        for spec in KEYS:
            _, name, parameters = parse_action(spec.action)
            if name not in ANSWER_ACTIONS:
                continue
            keys = [k.strip() for k in effective_key(spec, keymap).split(",")]
            if key in keys and self.app.check_action(name, parameters):
                return True
        return False

    async def on_paste(self, event: events.Paste) -> None:
        """Keep every line of a paste; refuse, and say so, one over the message limit."""
        start, end = self.selection
        selected = len(self.get_text_range(start, end)) if start != end else 0
        self.answer_keys = False
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        room = MESSAGE_LIMIT - (len(self.text) - selected)
        if len(text) > room:
            event.prevent_default()
            event.stop()
            self.app.notify(
                f"not pasted: {len(text):,} characters would take the message over its limit "
                f"of {MESSAGE_LIMIT:,} ({max(room, 0):,} left); paste less, or point the agent "
                "at a file instead", severity="warning", timeout=8)
            return
        event.text = text  # (a terminal's line ends as the box's own; the text area pastes it)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Typing past the limit: the text is cut back to it (a paste never gets here). Any
        text makes the box the human's (`answer_keys`)."""
        if self.text:
            self.answer_keys = False
        if len(self.text) > MESSAGE_LIMIT:
            self.value = self.text[:MESSAGE_LIMIT]
            self.app.bell()

    def action_submit(self) -> None:
        """Send the text; a backslash just before the cursor becomes a new line instead."""
        row, column = self.cursor_location
        if column and self.document[row][column - 1] == "\\" and self.selection.is_empty:
            self.replace("\n", (row, column - 1), (row, column))
            return
        self.post_message(self.Submitted(self, self.text))

    def action_newline(self) -> None:
        """A new line at the cursor (within the message limit)."""
        if len(self.text) < MESSAGE_LIMIT:
            self.insert("\n")

    def action_send_now(self) -> None:
        """Stop the agent's turn and send this message at once."""
        if isinstance(self.parent, Composer):
            self.parent.send_now()

    def action_complete_move(self, step: int) -> None:
        """Move in the completion list, or up into the queued messages from the first line;
        else the cursor moves a line."""
        composer = self.parent
        row = self.cursor_location[0]
        at_edge = row == 0 if step < 0 else row == self.document.line_count - 1
        if isinstance(composer, Composer) and at_edge and composer.move(step):
            return
        if step < 0:
            self.action_cursor_up()
        else:
            self.action_cursor_down()

    def action_history_search(self) -> None:
        """Search the earlier prompts (ctrl+r again: the next older match)."""
        if isinstance(self.parent, Composer):
            self.parent.search_history()

    def action_complete(self) -> None:
        """Complete the highlighted command (or take the highlighted earlier prompt)."""
        if isinstance(self.parent, Composer):
            self.parent.complete()

    def action_leave(self) -> None:
        """Close the list, go back from a reason, or leave the box."""
        if isinstance(self.parent, Composer):
            self.parent.leave()


class QueueList(OptionList):
    """The queued messages; `escape` takes the highlighted one back."""

    BINDINGS = bindings("queue")

    def action_unqueue(self) -> None:
        """Take back the highlighted queued message."""
        index = self.highlighted
        if index is not None and isinstance(self.parent, Composer):
            self.parent.post_message(Composer.Unqueue(index))

    def action_back_to_box(self) -> None:
        """Back to the message box."""
        if isinstance(self.parent, Composer):
            self.parent.box.focus()


class Composer(Vertical):
    """The message box, its completion list and the queue (see the module docstring)."""

    DEFAULT_CSS = """
    Composer {
        height: auto;
        max-height: 50%;
        background: $panel;
        padding: 0 1;
        display: none;
    }
    Composer.-shown { display: block; }
    Composer #composer-label { height: auto; }
    Composer #composer-label.-one-line { height: 1; }
    Composer #composer-label.-one-line { text-wrap: nowrap; text-overflow: ellipsis; }
    Composer QueueList, Composer #commands {
        height: auto;
        max-height: 8;
        border: none;
        padding: 0;
        background: $surface;
        display: none;
    }
    Composer QueueList.-shown, Composer #commands.-shown { display: block; }
    Composer ComposerInput {
        height: auto;
        min-height: 1;
        max-height: 6;
        border: none;
        padding: 0 1;
        background: $surface;
    }
    Composer ComposerInput:focus { border: none; }  /* (its background: `colour_box`) */
    """

    class Submitted(Message):
        """Enter in the box (task mode): send `text` (empty: send the next held message)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class SendNow(Message):
        """Stop the running turn and send `text` at once."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Unqueue(Message):
        """Take back the queued message at `index`."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Reason(Message):
        """The human's reason for denying `approval_id` (`text`; "" for none), or `None`: went
        back without denying."""

        def __init__(self, approval_id: str, text: str | None) -> None:
            super().__init__()
            self.approval_id = approval_id
            self.text = text

    class FilesWanted(Message):
        """The `@` list opened and the workspace's file list is missing or stale."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.commands: tuple[CommandView, ...] = ()
        self.queued: tuple[str, ...] = ()
        self.offer = False  # a conversation can go on: the box is for messages and tasks
        self.live = False  # the agent is working
        self.held = False  # queued messages wait for the human (the last task did not complete)
        self.standby = False  # calls may wait for approval: the rows stay for a denial's reason
        self.waiting = False  # a call waits for approval now
        self._told_keys = False  # the label says the approval keys are text in the box
        self.reason_for: str | None = None  # the denial a reason is being typed for
        self._draft = ""  # the message typed before a reason was asked for
        self._draft_answers = False  # and whether the answer keys worked from the box then
        self._matches: list[CommandView] = []
        self._dismissed = ""  # the text whose completion list escape closed
        self.history: tuple[str, ...] = ()  # this project's earlier prompts, oldest first
        self._recall: int | None = None  # the earlier prompt shown by up/down (its index)
        self._recalled = ""  # its text as shown (an edit ends the browsing)
        self._before_recall = ""  # what was in the box before up recalled
        self.searching = False  # ctrl+r: the box's text filters the earlier prompts
        self._found: list[str] = []
        self.files: FileIndex | None = None  # the workspace's files (None: not listed yet)
        self._files_fresh = False  # listed since the last turn ended (else listed again)
        self._files_asked = False  # a listing was asked for and has not come back
        self._mention: tuple[int, str] | None = None  # the `@` being typed: where, and what
        self._file_matches: list[FileMatch] = []
        self._matching: str | None = None  # the query matched in a thread, not back yet
        self._label_shown: tuple[object, ...] | None = None  # what the label shows

    def compose(self) -> ComposeResult:
        yield QueueList(id="queued")
        yield OptionList(id="commands")
        yield Static("", id="composer-label")
        yield ComposerInput(id="next-task")

    def on_mount(self) -> None:
        self.query_one("#commands", OptionList).can_focus = False
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.colour_box())
        self._refresh()

    def colour_box(self) -> None:
        """The box's background, inline (a class or a `:focus` rule restyled the text area
        and its component classes, see `ComposerInput.watch_has_focus`): asking a denial's
        reason, the theme's `$error` at 15% (over the panel's own colour); focused, `$boost`;
        otherwise its CSS one (`$surface`)."""
        box = self.box
        variables = self.app.theme_variables
        box.styles.background = (
            Color.parse(variables["error"]).with_alpha(0.15) if self.reason_for is not None
            else Color.parse(variables["boost"]) if box.has_focus else None)

    @property
    def box(self) -> ComposerInput:
        """The input box."""
        return self.query_one(ComposerInput)

    @property
    def completing(self) -> bool:
        """Whether the completion list is showing (commands, or earlier prompts found)."""
        return bool(self._matches) or bool(self._file_matches) or self._matching is not None \
            or (self.searching and bool(self._found))

    # What to show ---------------------------------------------------------------------------
    def show(self, *, offer: bool, live: bool, queued: Sequence[str], held: bool,
             commands: Sequence[CommandView], standby: bool = False,
             waiting: bool = False) -> None:
        """Update from the app: whether tasks can be sent, whether the agent works, the queue,
        whether it is held, the agent's commands, whether to stand by for a denial's reason
        (`standby`: shown, with its rows, even when nothing can be sent), and whether a call
        waits for approval (`waiting`: typing here, the label says how to answer it)."""
        commands = tuple(commands)
        changed = commands != self.commands
        if self.live and not live:
            self._files_fresh = False  # the turn may have made or removed files
        self.offer, self.live, self.held, self.standby = offer, live, held, standby
        self.waiting = waiting
        self.commands = commands
        if tuple(queued) != self.queued:
            self.queued = tuple(queued)
            self._show_queue()
        if changed:
            self._complete_for(self.box.value)
        self._refresh()

    def _refresh(self) -> None:
        self._told_keys = self._tell_keys()
        palette = palette_for(self.app)
        label = Text(no_wrap=False)
        box = self.box
        if self.searching:
            label.append("search earlier prompts ", palette.accent)
            label.append(f"{len(self._found)} found · type to filter · enter or "
                         f"{key_label(self.app, 'complete')} takes it · "
                         f"{key_label(self.app, 'leave-box')} closes", palette.dim)
            box.placeholder = "words of an earlier prompt"
        elif self._mention is not None and self.reason_for is None:
            label.append("mention a file ", palette.accent)
            found = len(self._file_matches)
            said = "listing the workspace's files…" if self.files is None else \
                f"{found} {'match' if found == 1 else 'matches'} among {len(self.files):,} files" \
                if found else "no file matches"
            label.append(f"{said} · {key_label(self.app, 'complete')} or enter puts it in · "
                         f"{key_label(self.app, 'leave-box')} closes", palette.dim)
        elif self.reason_for is not None:
            label.append("why deny it? ", palette.error)
            label.append("your words go to the agent with the denial · enter denies (empty: "
                         f"no reason) · {key_label(self.app, 'leave-box')} goes back",
                         palette.dim)
            box.placeholder = "the reason for denying (optional)"
        elif not self.offer:  # standing by: nothing can be sent, a denial's reason comes here
            label.append(f"{key_label(self.app, 'deny')} denies a waiting call and asks here "
                         "why (optional)", palette.dim)
            box.placeholder = ""
        elif self._told_keys:  # typing while a call waits: its keys are text here
            label.append("a call waits for you ", palette.warning)
            label.append(f"— keys here are text: {key_label(self.app, 'leave-box')} leaves the "
                         f"box, then {key_label(self.app, 'approve')} or "
                         f"{key_label(self.app, 'deny')} answers it", palette.dim)
        elif self.live:
            label.append("message to the agent ", palette.accent)
            label.append("queued until its turn ends · "
                         f"{key_label(self.app, 'send-now-anywhere')} sends now", palette.dim)
            box.placeholder = "type a message (" + ("/ for the agent's commands, "
                                                    if self.commands else "") + "enter queues it)"
        else:
            label.append("next task ", palette.accent)
            count = len(self.queued)
            if self.held and count:
                label.append(f"{count} queued message{'s' if count > 1 else ''} held (the "
                             "last task did not complete): enter on an empty box sends the "
                             "next", palette.warning)
            else:
                label.append("enter sends it in this conversation (grants carry over)",
                             palette.dim)
            box.placeholder = "type the next task" + (" (/ for the agent's commands)"
                                                      if self.commands else "")
        shown = self.query_one("#composer-label", Static)
        one_line = shown.has_class("-one-line")
        self.fit_height()
        # One line before and after: the label's height cannot change, so no layout (the
        # layout pass is most of what `n` cost when the label was updated with one).
        shape = (label.plain, tuple(label.spans))
        if shape != self._label_shown:  # (unchanged: no repaint, e.g. on every approval)
            self._label_shown = shape
            shown.update(label, layout=not (one_line and shown.has_class("-one-line")))
        # The reason's colour is the box's own inline background: a class on the composer
        # restyled its whole subtree (the text area, both lists) on every `n`, and a class on
        # the text area restyled it and its many component classes (~2 ms); an inline colour
        # only repaints it.
        self.colour_box()
        box.can_focus = self.offer or self.reason_for is not None
        self.set_class(self.offer or self.reason_for is not None or self.standby, "-shown")

    def _tell_keys(self) -> bool:
        """Whether the label says how to answer the waiting call: the human types in the box,
        where the approval keys are text (`ComposerInput.answer_keys`)."""
        box = self.box
        return self.waiting and self.reason_for is None and box.has_focus \
            and not box.answer_keys

    def answer_keys_changed(self) -> None:
        """The box's focus or `answer_keys` changed: the label again, if what it says about
        the approval keys changes (otherwise nothing: this runs on a focus move)."""
        if self._tell_keys() != self._told_keys:
            self._refresh()

    def fit_height(self, rows: int | None = None) -> None:
        """On a short screen (`rows` high, default the app's) the label takes one line, which
        keeps the transcript in sight (a held queue's warning always shows whole), and the
        completion list as many rows as leave the box in sight; called again when the terminal
        resizes. Standing by or asking a denial's reason it always takes one line: `n` then
        changes no height (the transcript keeps its rows)."""
        rows = self.app.size.height if rows is None else rows
        warning = self.held and bool(self.queued)
        reason = self.reason_for is not None or (self.standby and not self.offer)
        self.query_one("#composer-label", Static).set_class(
            not warning and (rows < SHORT_SCREEN or reason), "-one-line")
        # The completion list takes what is left of the composer's half of the screen once
        # the label and the box have their rows: the box stays in sight (40x12: 3 rows).
        self.query_one("#commands", OptionList).styles.max_height = \
            max(1, min(MAX_SHOWN, rows // 2 - 3))

    def _show_queue(self) -> None:
        queue = self.query_one(QueueList)
        palette = palette_for(self.app)
        options = []
        for n, text in enumerate(self.queued, 1):
            row = Text(f"queued {n} ", palette.warning)
            row.append(clean_line(text, 300), palette.text)
            options.append(Option(row))
        queue.set_options(options)
        queue.set_class(bool(options), "-shown")
        if not options and queue.has_focus:
            self.box.focus()

    # Completion -----------------------------------------------------------------------------
    @on(TextArea.Changed, "#next-task")
    def _changed(self, event: TextArea.Changed) -> None:
        event.stop()
        text = event.text_area.text
        if self._recall is not None and text != self._recalled:
            self._recall = None  # edited: it is a new message now
        if self.reason_for is None:
            self._complete_for(text)

    def _complete_for(self, text: str) -> None:
        if self.searching:
            self._show_found(text)
            return
        mention = None if text == self._dismissed or self.reason_for is not None \
            else mention_at(text, self.box.cursor_position)
        was, self._mention = self._mention, mention
        if mention is not None:
            self._show_files(mention[1])
            return
        self._file_matches, self._matching = [], None
        if was is not None:
            self._refresh()  # the label says what the box is for again
        matches = [] if text == self._dismissed else matching_commands(self.commands, text)
        self._matches = matches[:200]
        palette = palette_for(self.app)
        rows = []
        for command in self._matches:
            row = Text(no_wrap=True, overflow="ellipsis")
            row.append(clean_line(command_token(command), 100), palette.accent)
            if command.hint:
                row.append(f" {clean_line(command.hint, 80)}", palette.dim)
            if command.description:
                row.append("  " + clean_line(command.description, 300), palette.text)
            rows.append(row)
        self._show_list(rows)

    def _show_list(self, rows: list[Text]) -> None:
        """The completion list with `rows` (hidden when there are none), the first
        highlighted."""
        listing = self.query_one("#commands", OptionList)
        listing.set_options([Option(row) for row in rows])
        if rows:
            listing.highlighted = 0
        listing.set_class(bool(rows), "-shown")
        self.refresh_bindings()

    # `@` mentions -----------------------------------------------------------------------------
    def set_files(self, paths: Sequence[str] | FileIndex) -> None:
        """The workspace's files (listed off the loop by the app, and indexed there too when
        it hands a `FileIndex`): the `@` list matches them."""
        self.files = paths if isinstance(paths, FileIndex) else FileIndex(paths)
        self._files_fresh, self._files_asked = True, False
        if self._mention is not None:
            self._complete_for(self.box.value)

    def files_failed(self) -> None:
        """The listing failed (the app said why): no files until the next turn asks again."""
        if self.files is None:
            self.files = FileIndex(())
        self._files_fresh, self._files_asked = True, False
        if self._mention is not None:
            self._complete_for(self.box.value)

    def _show_files(self, query: str) -> None:
        """The `@` list for `query` (the files listed again first if a turn ended since)."""
        self._matches = []
        if not self._files_fresh and not self._files_asked:
            self._files_asked = True
            self.post_message(self.FilesWanted())
        index = self.files
        if index is None or len(index) <= FILES_AT_ONCE:
            self._show_file_matches(query, index.match(query, FILES_SHOWN) if index else [])
            return
        self._matching = query
        self._match_in_thread(index, query)

    @work(thread=True, exclusive=True, group="file-matches", exit_on_error=False)
    def _match_in_thread(self, index: FileIndex, query: str) -> None:
        found = index.match(query, FILES_SHOWN)
        self.app.call_from_thread(self._matched, index, query, found)

    def _matched(self, index: FileIndex, query: str, found: list[FileMatch]) -> None:
        """A thread's matches: shown if they still answer what the box asks."""
        if self._matching == query and self.files is index:
            self._show_file_matches(query, found)

    def _settle_matches(self) -> None:
        """A key that acts on the `@` list (tab, enter, up, down, escape) came before the
        thread's answer: match now, so it acts on what is typed, not on the keystroke before."""
        if self._matching is not None and self._mention is not None and self.files is not None:
            query = self._mention[1]
            self._show_file_matches(query, self.files.match(query, FILES_SHOWN))

    def _show_file_matches(self, query: str, found: list[FileMatch]) -> None:
        self._matching = None
        self._file_matches = found
        palette = palette_for(self.app)
        rows = []
        for match in found:
            row = Text(no_wrap=True, overflow="ellipsis")
            marked = set(match.positions)
            for i, ch in enumerate(match.path[:300]):
                row.append(escape_all(ch), palette.accent if i in marked else palette.text)
            rows.append(row)
        self._show_list(rows)
        self._refresh()

    def _complete_file(self) -> None:
        """Put the highlighted file in the box as `@path` (quoted when it needs it) and a space."""
        index = self.query_one("#commands", OptionList).highlighted
        if self._mention is None or index is None or index >= len(self._file_matches):
            return
        box = self.box
        text, cursor = box.value, box.cursor_position
        at = self._mention[0]
        end = cursor  # the rest of a plain token after the cursor is replaced too
        if not text.startswith('"', at + 1):
            while end < len(text) and not text[end].isspace():
                end += 1
        token = mention_token(self._file_matches[index].path)
        after = text[end:]
        spaced = token + ("" if after[:1].isspace() else " ")
        box.value = text[:at] + spaced + after
        box.cursor_position = at + len(spaced)
        self._dismissed = box.value  # completed: no list until the text changes again
        self._complete_for(box.value)

    def move(self, step: int) -> bool:
        """Up/down at the box's edge: through the completion list (or the prompts found), up
        into the queued messages, else through this project's earlier prompts; False when
        none applies (the cursor moves instead)."""
        if self.searching and self._found:
            listing = self.query_one("#commands", OptionList)
            current = listing.highlighted or 0
            listing.highlighted = max(0, min(len(self._found) - 1, current + step))
            return True
        self._settle_matches()
        shown = self._matches or self._file_matches
        if shown:
            listing = self.query_one("#commands", OptionList)
            current = listing.highlighted or 0
            listing.highlighted = max(0, min(len(shown) - 1, current + step))
            return True
        if step < 0 and self.queued:
            queue = self.query_one(QueueList)
            queue.focus()
            queue.highlighted = len(self.queued) - 1
            return True
        return self._recall_step(step)

    # Earlier prompts --------------------------------------------------------------------------
    def set_history(self, prompts: Sequence[str]) -> None:
        """This project's earlier prompts, oldest first (read from its history file)."""
        self.history = tuple(prompts) + tuple(p for p in self.history if p not in prompts)

    def remember(self, text: str) -> None:
        """A prompt was sent: the newest earlier prompt now."""
        if text.strip() and (not self.history or self.history[-1] != text):
            self.history = (*self.history, text)

    def _recall_step(self, step: int) -> bool:
        """Up: the next older prompt; down: the next newer, then back to what was typed."""
        if self.reason_for is not None or not self.history:
            return False
        if self._recall is None:
            if step > 0:
                return False
            self._before_recall = self.box.value
            index = len(self.history) - 1
        else:
            index = self._recall + step
        if index >= len(self.history):
            self._recall = None
            self.box.value = self._before_recall
            return True
        index = max(0, index)
        self._recall = index
        self._recalled = self.history[index][:MESSAGE_LIMIT]
        self.box.value = self._recalled
        self.box.cursor_position = 0 if step < 0 else len(self._recalled)
        return True

    def search_history(self) -> None:
        """ctrl+r: the box's text filters the earlier prompts (again: the next older one)."""
        if self.reason_for is not None:
            return
        if self.searching:
            self.move(1)
            return
        self.searching = True
        self._matches = []
        self._complete_for(self.box.value)
        self._refresh()

    def _show_found(self, query: str) -> None:
        self._found = matching_prompts(self.history, query)
        listing = self.query_one("#commands", OptionList)
        palette = palette_for(self.app)
        listing.set_options([Option(Text(clean_line(prompt, 300), palette.text, no_wrap=True,
                                         overflow="ellipsis")) for prompt in self._found])
        if self._found:
            listing.highlighted = 0
        listing.set_class(True, "-shown")
        self.refresh_bindings()
        self._refresh()

    def _end_search(self, take: bool) -> None:
        index = self.query_one("#commands", OptionList).highlighted
        chosen = self._found[index] if take and self._found and index is not None \
            and index < len(self._found) else None
        self.searching = False
        self._found = []
        if chosen is not None:
            self.box.value = chosen[:MESSAGE_LIMIT]
            self._dismissed = self.box.value
        self._complete_for(self.box.value)
        self._refresh()

    def _highlighted(self) -> CommandView | None:
        index = self.query_one("#commands", OptionList).highlighted
        return self._matches[index] if self._matches and index is not None \
            and index < len(self._matches) else None

    def complete(self) -> None:
        """Put the highlighted command in the box (with a space when it takes input), or,
        searching, the highlighted earlier prompt."""
        if self.searching:
            self._end_search(take=True)
            return
        self._settle_matches()
        if self._file_matches:
            self._complete_file()
            return
        command = self._highlighted()
        if command is None:
            return
        token = command_token(command)
        box = self.box
        value = box.value
        rest = value[len(token):] if value.lower().startswith(token.lower() + " ") else ""
        box.value = token + (rest or (" " if command.hint else ""))
        box.cursor_position = len(box.value)
        self._dismissed = box.value  # completed: no list until the text changes again
        self._complete_for(box.value)

    def key_applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which composer keys apply now (the footer shows only those)."""
        if action == "complete":
            return self.completing
        if action == "complete_move":
            up = parameters[:1] == (-1,)
            return self.completing or (up and bool(self.queued or self.history)) \
                or (not up and self._recall is not None)
        if action == "send_now":
            return self.reason_for is None and self.offer and self.live
        return True

    # Sending ----------------------------------------------------------------------------------
    @on(ComposerInput.Submitted, "#next-task")
    def _submitted(self, event: ComposerInput.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if self.reason_for is not None:
            self._end_reason(text)
            return
        if self.searching:
            self._end_search(take=True)  # enter takes the prompt found; the next enter sends
            return
        self._settle_matches()
        if self._file_matches:
            self._complete_file()  # enter with the `@` list open completes; the next sends
            return
        command = self._highlighted()
        if any(command_token(c).lower() == text.lower() for c in self._matches):
            command = None  # typed whole (`/mode`, though `/model` is highlighted): send it
        if command is not None and text.lower() != command_token(command).lower() \
                and not text.lower().startswith(command_token(command).lower() + " "):
            self.complete()  # "/rev" + enter: complete first, send with the next enter
            return
        self.box.value = ""
        self._recall = None
        self.box.answer_keys = True  # (sent: the approval keys work from the empty box again)
        self.post_message(self.Submitted(text))

    def send_now(self) -> None:
        """Stop the running turn and send the box's text at once."""
        text = self.box.value.strip()
        if not text or self.reason_for is not None:
            return
        self.box.value = ""
        self.box.answer_keys = True
        self.post_message(self.SendNow(text))

    def leave(self) -> None:
        """Escape: close the list; else go back from a reason; else leave the box."""
        if self.searching:
            self._end_search(take=False)
            return
        self._settle_matches()
        if self._matches or self._file_matches:
            self._dismissed = self.box.value
            self._complete_for(self.box.value)
            return
        if self.reason_for is not None:
            self._end_reason(None)
            return
        self.screen.focus_next()  # out of the box (a transcript key works again)
        if self.box.has_focus:
            self.box.blur()

    # A denial's reason ------------------------------------------------------------------------
    def ask_reason(self, approval_id: str) -> None:
        """Ask for the reason of denying `approval_id` in the box (the draft is kept)."""
        if self.reason_for is None:
            self._draft = self.box.value
            self._draft_answers = self.box.answer_keys
        self.reason_for = approval_id
        self.box.value = ""
        self._matches = []
        self._complete_for("")
        self._refresh()
        self.box.focus()

    def drop_reason(self) -> None:
        """The denial no longer waits (answered otherwise): back to the message."""
        if self.reason_for is not None:
            self._restore()

    def _end_reason(self, text: str | None) -> None:
        approval_id = self.reason_for
        self._restore()
        if approval_id is not None:
            self.post_message(self.Reason(approval_id, text))

    def _restore(self) -> None:
        self.reason_for = None
        self.box.value = self._draft
        self.box.answer_keys = self._draft_answers  # (as before the reason was asked)
        self._draft = ""
        self._refresh()

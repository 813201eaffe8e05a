"""`QuestionForm`: the agent's oldest open question, as a form in the approval area.

A text, number or whole-number field is a one-line box; yes/no a checkbox; one of several
options a radio set; any of several a selection list. `tab` moves between fields, `ctrl+s`
sends the answer (so does `enter` in the last box), `escape` declines. Everything in it came
from the agent: shown as plain text, cleaned and cut, never markup.

A link question (ACP URL mode) has no fields: it shows the link marked (control, bidi and
zero-width characters as markers, a long one cut with `…`) and the host it goes to. Nothing
opens it but `o` (http and https only; anything else is refused with the reason), in a worker
thread; once the browser took it, the answer is `accept`. `ctrl+s` accepts without opening it
(the human opens it by hand), `escape` declines.

It renders from a `RunView` and posts `Answered` / `Declined`; the live app passes those to
`Session.answer_question`, which checks the values against the question (an answer that does
not fit comes back with `show_error`). In the replay viewer it is shown, not answerable.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.events import DescendantFocus, Resize
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, RadioButton, RadioSet, SelectionList, Static

from cockpit.keys import bindings, key_label
from cockpit.styles import palette_for
from cockpit.widgets.browser import open_in_browser
from cockpit.widgets.safe_text import clean_line, styled
from engine_adapter.events import field_kind_text, field_label, link_host, link_refusal, link_text
from engine_adapter.view import QuestionItem, RunView

__all__ = ["OPEN_TIMEOUT", "QuestionForm"]

OPEN_TIMEOUT = 15.0
"""Seconds a browser may take to take a link before the form stops waiting for it."""
URL_SHOWN = 600
"""Characters of a link the form shows (the rest is counted)."""


class ChoiceField(RadioSet):
    """One of several options: up/down move, space or enter choose. Focused with nothing
    highlighted yet, it highlights the chosen option (else the first), so space chooses at once."""

    def on_focus(self) -> None:
        # Through RadioSet's public face only: the highlighted button is the one with the
        # `-selected` class, and `action_next_button` moves the highlight (from none: the first).
        buttons = list(self.query(RadioButton))
        if not buttons or any(button.has_class("-selected") for button in buttons):
            return
        target = self.pressed_button or buttons[0]
        for _ in buttons:
            self.action_next_button()
            if target.has_class("-selected"):
                break


def _field_widget(index: int, field: Any, disabled: bool) -> Widget:
    """The widget that takes one field's answer, its default filled in."""
    wid = f"qf-{index}"
    default = field.default
    if field.kind == "boolean":  # its name is on the line above: the box says what ticked means
        return Checkbox(Text("yes"), value=default is True, id=wid, disabled=disabled)
    if field.kind == "choice":
        buttons = [RadioButton(Text(clean_line(option.label or option.value, 300)),
                               value=option.value == default)
                   for option in field.options or []]
        return ChoiceField(*buttons, id=wid, disabled=disabled)
    if field.kind == "multi":
        chosen = set(default or []) if isinstance(default, list) else set()
        return SelectionList[str](*[
            (Text(clean_line(option.label or option.value, 300)), option.value,
             option.value in chosen) for option in field.options or []],
            id=wid, disabled=disabled)
    value = "" if default is None or isinstance(default, bool | list) else (
        f"{default:g}" if isinstance(default, float) else str(default))
    kind: Literal["integer", "number", "text"] = (
        "integer" if field.kind == "integer" else "number" if field.kind == "number" else "text")
    hint = clean_line(field.format or field_kind_text(field), 80)
    return Input(value=value, type=kind, placeholder=hint, id=wid, disabled=disabled,
                 max_length=20_000, valid_empty=True)


class QuestionForm(Vertical):
    """Shown while a question is open; `show(view)` updates or hides it."""

    DEFAULT_CSS = """
    QuestionForm {
        display: none;
        height: auto;
        max-height: 60%;
        background: $panel;
        border-top: thick $accent;
        padding: 0 1;
    }
    QuestionForm.-open { display: block; }
    QuestionForm #question-head { height: auto; }
    QuestionForm #question-fields { height: auto; }
    QuestionForm .question-label { height: auto; margin-top: 1; }
    QuestionForm Input { height: 1; border: none; padding: 0 1; background: $surface; }
    QuestionForm Input:focus { border: none; background: $boost; }
    QuestionForm RadioSet, QuestionForm SelectionList {
        height: auto; max-height: 8; border: none; padding: 0; background: $surface;
    }
    QuestionForm RadioSet:focus, QuestionForm SelectionList:focus {
        border: none; background: $boost;
    }
    QuestionForm Checkbox { border: none; padding: 0; background: $surface; }
    QuestionForm Checkbox:focus { border: none; background: $boost; }
    QuestionForm #question-error { height: auto; color: $error; }
    QuestionForm #question-keys { height: auto; }
    """

    BINDINGS = bindings("question")

    class Answered(Message):
        """Send `values` (field name -> answer) for question `question_id`."""

        def __init__(self, question_id: str, values: dict[str, Any]) -> None:
            super().__init__()
            self.question_id, self.values = question_id, values

    class Declined(Message):
        """Decline question `question_id`."""

        def __init__(self, question_id: str) -> None:
            super().__init__()
            self.question_id = question_id

    class Resized(Message):
        """The form's height on screen changed (what it covers of the transcript)."""

        def __init__(self, height: int) -> None:
            super().__init__()
            self.height = height

    def __init__(self, *, answerable: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.answerable = answerable
        self.question: QuestionItem | None = None
        self.height_shown = 0
        self._head = Text()

    def compose(self) -> ComposeResult:
        yield Static("", id="question-head")
        yield VerticalScroll(id="question-fields")
        yield Static("", id="question-error")
        yield Static("", id="question-keys")

    @property
    def question_id(self) -> str | None:
        """The id of the question shown, or None."""
        return self.question.question_id if self.question is not None else None

    def show(self, view: RunView) -> None:
        """Show the oldest open question of `view`, or hide."""
        row = next(iter(view.questions.values()), None) if view.questions else None
        if row is None:
            self.question = None
            self.remove_class("-open")
            return
        if self.question is not None and row.question_id == self.question.question_id:
            self.question = row
            return
        self.question = row
        self._build(row, len(view.questions))
        self.add_class("-open")
        self._fit()

    def _fit(self) -> None:
        """The fields scroll within the rows the form may take (60% of the run's area, less
        its head, error and keys lines), so the keys line always shows."""
        width = max(20, (self.size.width or self.app.size.width) - 2)
        head_rows = len(self._head.wrap(self.app.console, width))
        parent = self.parent
        height = parent.size.height if isinstance(parent, Widget) and parent.size.height \
            else self.app.size.height
        room = height * 6 // 10 - head_rows - 4  # its border, the error and the keys lines
        self.query_one("#question-fields", VerticalScroll).styles.max_height = max(3, room)

    def _build(self, row: QuestionItem, open_count: int) -> None:
        palette = palette_for(self.app)
        head = Text()
        head.append("? the agent asks", palette.accent)
        if open_count > 1:
            head.append(f"  (1 of {open_count} open, oldest first)", palette.dim)
        head.append("\n")
        head.append_text(styled(row.message, palette.text, limit=4_000))
        if row.url is not None:
            head.append_text(self._link(row.url))
        self._head = head
        self.can_focus = row.url is not None and not row.fields  # the keys need a focus
        self.query_one("#question-head", Static).update(head)
        fields = self.query_one("#question-fields", VerticalScroll)
        fields.remove_children()
        widgets: list[Widget] = []
        for index, field in enumerate(row.fields):
            label = Text()
            label.append(clean_line(field_label(field), 200), palette.primary)
            label.append(f"  {clean_line(field_kind_text(field), 400)}", palette.dim)
            if field.description:
                label.append("\n")
                label.append_text(styled(field.description, palette.dim, limit=1_000))
            widgets.append(Static(label, classes="question-label"))
            widgets.append(_field_widget(index, field, disabled=not self.answerable))
        if not widgets and row.url is None:
            widgets.append(Static(Text("(nothing to fill in)", palette.dim)))
        fields.mount(*widgets)
        self.show_error("")
        keys = Text()
        if self.answerable:
            hints = ((("open-link", "open it in your browser"), ("answer", "done (opened by hand)"),
                      ("decline", "decline")) if row.url is not None and not row.fields else
                     (("answer", "send the answer"), ("decline", "decline"),
                      ("next-field", "next field")))
            for binding_id, what in hints:
                key = key_label(self.app, binding_id) if binding_id != "next-field" else "tab"
                keys.append(f"[{key}]", palette.success if binding_id in ("answer", "open-link")
                            else palette.accent)
                keys.append(f" {what}   ")
        else:
            keys.append("(the live cockpit takes the answer here)", palette.dim)
        self.query_one("#question-keys", Static).update(keys)

    def _link(self, url: str) -> Text:
        """The link's lines: the URL marked and cut, where it goes, and whether `o` opens it."""
        palette = palette_for(self.app)
        text = Text("\nlink  ", palette.dim)
        text.append_text(styled(link_text(url, URL_SHOWN), palette.primary,
                                limit=URL_SHOWN + 40))
        host = link_host(url)
        refusal = link_refusal(url)
        if host is not None:
            text.append("\ngoes to  ", palette.dim)
            text.append_text(styled(host, palette.text, limit=300))
        if refusal is not None:
            text.append(f"\nnot opened by the cockpit: {refusal}", palette.warning)
        elif self.answerable:
            text.append("\nnothing opens until you press "
                        f"{key_label(self.app, 'open-link')}", palette.dim)
        return text

    def focus_first(self) -> None:
        """Put the focus in the first field (a link question: on the form itself)."""
        fields = self.query_one("#question-fields", VerticalScroll)
        for widget in fields.children:
            if widget.focusable:
                widget.focus(scroll_visible=False)
                fields.scroll_home(animate=False)
                return
        if self.focusable:
            self.focus(scroll_visible=False)

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """A field got the focus: its label (above it) comes into sight with it."""
        fields = self.query_one("#question-fields", VerticalScroll)
        widget: DOMNode = event.widget
        if widget.parent is not fields:
            widget = next((w for w in widget.ancestors if w.parent is fields), widget)
        children = list(fields.children)
        if widget in children:
            index = children.index(widget)
            if index > 0:
                fields.scroll_to_widget(children[index - 1], animate=False, top=True)
            fields.scroll_to_widget(widget, animate=False)

    def show_error(self, text: str) -> None:
        """Say why the answer was not taken ("" clears it)."""
        self.query_one("#question-error", Static).update(Text(clean_line(text, 500)))

    def values(self) -> dict[str, Any]:
        """What the human filled in, by field name (empty boxes left out)."""
        row = self.question
        if row is None:
            return {}
        values: dict[str, Any] = {}
        for index, field in enumerate(row.fields):
            matches = self.query(f"#qf-{index}")
            if not matches:
                continue
            widget = matches.first()
            if isinstance(widget, Checkbox):
                values[field.name] = widget.value
            elif isinstance(widget, RadioSet):
                pressed = widget.pressed_index
                options = field.options or []
                if 0 <= pressed < len(options):
                    values[field.name] = options[pressed].value
            elif isinstance(widget, SelectionList):
                values[field.name] = list(widget.selected)
            elif isinstance(widget, Input) and widget.value.strip():
                values[field.name] = widget.value
        return values

    # Keys -----------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send_answer", "decline_question"):
            return self.answerable and self.question is not None
        if action == "open_link":
            return self.answerable and self.question is not None \
                and self.question.url is not None
        return True

    def action_open_link(self) -> None:
        """Open the question's link in the browser, in a worker (the keys stay live while a
        browser starts); once it took the link, tell the agent (`accept`)."""
        row = self.question
        if row is None or row.url is None:
            return
        refusal = link_refusal(row.url)
        if refusal is not None:
            self.show_error(f"not opened: {refusal}")
            return
        self.show_error("opening the link…")
        self.run_worker(self._open(row.question_id, row.url), group="open-link",
                        exclusive=True, exit_on_error=False)

    async def _open(self, question_id: str, url: str) -> None:
        try:
            failed = await asyncio.wait_for(asyncio.to_thread(open_in_browser, url),
                                            OPEN_TIMEOUT)
        except TimeoutError:
            failed = "the browser did not answer in time: open the link yourself"
        if self.question is None or self.question.question_id != question_id:
            return  # answered or gone meanwhile: nothing to say to it
        if failed is not None:
            self.show_error(f"not opened: {failed}")
            return
        self.show_error("")
        self.post_message(self.Answered(question_id, {}))

    def action_send_answer(self) -> None:
        """Send the answer as filled in."""
        if self.question is not None:
            self.post_message(self.Answered(self.question.question_id, self.values()))

    def action_decline_question(self) -> None:
        """Decline to answer."""
        if self.question is not None:
            self.post_message(self.Declined(self.question.question_id))

    @on(Input.Submitted)
    def _enter_in_a_box(self, event: Input.Submitted) -> None:
        """Enter in a box: on to the next field, or send from the last one."""
        event.stop()
        boxes = [w for w in self.query_one("#question-fields", VerticalScroll).children
                 if w.focusable]
        if boxes and event.input is boxes[-1]:
            self.action_send_answer()
        else:
            self.screen.focus_next()

    def on_resize(self, event: Resize) -> None:
        if self.question is not None:
            self._fit()
        if self.question is not None and self.outer_size.height != self.height_shown:
            self.height_shown = self.outer_size.height
            self.post_message(self.Resized(self.height_shown))

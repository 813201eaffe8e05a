"""The keys for talking to the agent while it works: the message box (queue a message, send it
now, complete a command), the queue, an agent's question, and a denial's reason. Registered in
`cockpit.keys` like every other binding (remappable by id, listed in the `?` help, shown in the
footer only where they apply); importing this module registers them once.

`ctrl+enter` reaches an application only from terminals that speak the kitty keyboard protocol
(kitty, foot, WezTerm, Ghostty; not tmux 3.3, xterm or GNOME's terminal, which send a plain
enter): `ctrl+j` (a line feed, which every terminal sends) does the same everywhere, and is the
one the footer shows.
"""

from __future__ import annotations

from cockpit.keys import KEYS, KeySpec, register

__all__ = ["STEER_SCOPES"]

STEER_SCOPES = ("steer", "composer", "queue", "question")

_SPECS = (
    # App-wide, while a conversation can go on.
    KeySpec("compose", "t", "focus_composer", "message", "steer",
            help="Type a message to the agent: while it works, the message is queued and sent "
                 "when its turn ends."),
    KeySpec("command", "slash", "start_command", "command", "steer", key_display="/",
            help="Start typing one of the agent's commands (/review, /compact, …), completed "
                 "with its description."),
    # In the message box.
    KeySpec("send-now", "ctrl+enter", "send_now", "send now", "composer", show=False,
            help="Stop the agent's turn and send the message at once (ctrl+enter reaches the "
                 "cockpit only from terminals with the kitty keyboard protocol: use ctrl+j)."),
    KeySpec("send-now-anywhere", "ctrl+j", "send_now", "send now (stops the turn)", "composer",
            help="Stop the agent's turn and send the message at once (works in every "
                 "terminal)."),
    KeySpec("complete-next", "down", "complete_move(1)", "next command", "composer",
            show=False, help="The next command in the completion list (or the queue)."),
    KeySpec("complete-previous", "up", "complete_move(-1)", "previous", "composer", show=False,
            help="The previous command in the completion list, or the queued messages."),
    KeySpec("complete", "tab", "complete", "complete", "composer",
            help="Complete the highlighted command."),
    KeySpec("leave-box", "escape", "leave", "leave", "composer", key_display="esc",
            help="Close the completion list; else leave the message box (or, typing a "
                 "denial's reason, go back without denying)."),
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
)

if not any(spec.id == _SPECS[0].id for spec in KEYS):
    register(*_SPECS[:2], title="Talking to the agent")
    register(*_SPECS[2:8], title="Message box")
    register(*_SPECS[8:10], title="Queued messages")
    register(*_SPECS[10:], title="Agent's question")

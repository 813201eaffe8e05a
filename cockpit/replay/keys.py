"""The replay viewer's keys, added to the one binding table (`cockpit.keys`) under their own
scope, so the footer, the `?` help and a user's keymap treat them like every other key."""

from __future__ import annotations

from cockpit.keys import KEYS, KeySpec, register

__all__ = ["PICKER_SCOPE", "REPLAY_SCOPE"]

REPLAY_SCOPE = "replay"

_SPECS = (
    KeySpec("replay-play", "space", "play_pause", "play/pause", REPLAY_SCOPE,
            help="Play from here, paced by the events' timestamps (long pauses shortened)."),
    KeySpec("replay-faster", "plus", "speed(1)", "faster", REPLAY_SCOPE, key_display="+",
            show=False, help="Play faster."),
    KeySpec("replay-slower", "minus", "speed(-1)", "slower", REPLAY_SCOPE, key_display="-",
            show=False, help="Play slower."),
    KeySpec("replay-back", "left", "step(-1)", "back", REPLAY_SCOPE, key_display="←",
            priority=True, help="One event back (of the filtered types, with a filter)."),
    KeySpec("replay-forward", "right", "step(1)", "forward", REPLAY_SCOPE, key_display="→",
            priority=True, help="One event forward."),
    KeySpec("replay-prev-tool", "left_square_bracket", "jump('tool', -1)", "prev tool",
            REPLAY_SCOPE, key_display="[", show=False, help="Previous tool call."),
    KeySpec("replay-next-tool", "right_square_bracket", "jump('tool', 1)", "next tool",
            REPLAY_SCOPE, key_display="]", show=False, help="Next tool call."),
    KeySpec("replay-prev-approval", "left_curly_bracket", "jump('approval', -1)",
            "prev approval", REPLAY_SCOPE, key_display="{", show=False,
            help="Previous approval request."),
    KeySpec("replay-next-approval", "right_curly_bracket", "jump('approval', 1)",
            "next approval", REPLAY_SCOPE, key_display="}", show=False,
            help="Next approval request."),
    KeySpec("replay-next-error", "e", "jump('error', 1)", "next error", REPLAY_SCOPE,
            help="Next error, failure or denial."),
    KeySpec("replay-prev-error", "E", "jump('error', -1)", "prev error", REPLAY_SCOPE,
            show=False, help="Previous error, failure or denial."),
    KeySpec("replay-first", "home", "first", "first", REPLAY_SCOPE, priority=True, show=False,
            help="The first event."),
    KeySpec("replay-last", "end", "last", "last", REPLAY_SCOPE, priority=True, show=False,
            help="The last event (and, on a journal being written, follow it)."),
    KeySpec("replay-search", "slash", "search", "search", REPLAY_SCOPE, key_display="/",
            help="Search the journal; shows the match count."),
    KeySpec("replay-next-match", "n", "match(1)", "next match", REPLAY_SCOPE, show=False,
            help="Next search match."),
    KeySpec("replay-prev-match", "N", "match(-1)", "prev match", REPLAY_SCOPE, show=False,
            help="Previous search match."),
    KeySpec("replay-filter", "f", "filter", "filter", REPLAY_SCOPE,
            help="Choose the event types that stepping and playing visit."),
    # Not a priority key: with a transcript item selected (up/down), enter expands it, as in
    # the live view; with none, it shows the event under the timeline's cursor.
    KeySpec("replay-inspect", "enter", "inspect_event", "raw event", REPLAY_SCOPE,
            help="Show the raw event under the cursor (with a transcript item selected, "
                 "enter expands the item instead, and i shows the events behind it)."),
    KeySpec("replay-resume", "r", "resume", "resume", REPLAY_SCOPE,
            help="Continue this agent run's conversation in the live cockpit (closes the "
                 "viewer; like `cockpit resume JOURNAL`)."),
    KeySpec("replay-help", "question_mark", "help", "help", REPLAY_SCOPE, key_display="?",
            help="Show every key."),
    KeySpec("replay-quit", "q", "quit_replay", "quit", REPLAY_SCOPE,
            help="Close the viewer."),
    KeySpec("replay-quit-ctrl", "ctrl+q", "quit_replay", "quit", REPLAY_SCOPE, show=False,
            priority=True, help="Close the viewer."),
)

PICKER_SCOPE = "picker"

_PICKER_SPECS = (
    KeySpec("picker-resume", "r", "resume", "resume", PICKER_SCOPE,
            help="Continue the selected agent run's conversation in the live cockpit."),
)

if not any(spec.id == _SPECS[0].id for spec in KEYS):  # once, however often imported
    register(*_SPECS, title="Replay")
    register(*_PICKER_SPECS, title="Journal picker")

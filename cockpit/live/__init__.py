"""The live cockpit: `CockpitApp` over a `Session` — watch the run, steer it by keypress.

- `app`: `CockpitApp`, the screen, its keys and the grants it shows.
- `steering`: talking to the agent while it works (the message box, the queue, questions).
- `pump`: the frame pump (events folded as they come, drawn at most once a frame);
  `answer_first`: what a key answers is drawn before the transcript that waits behind it.
- `agent_settings`: the command palette's entries for an agent's session settings.
"""

from cockpit.live.app import CockpitApp

__all__ = ["CockpitApp"]

"""A journal at any position: the run's view as of any event, without any UI.

- `seek`: `JournalReplay`, the view at a position, folded from the nearest checkpoint.
- `navigator`: the replay viewer's state machine (step, jump, play, follow a growing journal).
- `fold_lines`: a journal's lines folded, streamed text in bulk; `tail`: a journal's last part
  folded on its own, shown while the pass reads on.
"""

from engine_adapter.replay.navigator import FoldTail, Frame, Navigator, Seek, Wait, code_class
from engine_adapter.replay.seek import JournalReplay
from engine_adapter.replay.tail import TAIL_BYTES, Tail

__all__ = [
    "TAIL_BYTES",
    "FoldTail",
    "Frame",
    "JournalReplay",
    "Navigator",
    "Seek",
    "Tail",
    "Wait",
    "code_class",
]

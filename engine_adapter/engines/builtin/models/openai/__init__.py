"""`OpenAIModel`: the built-in engine's model over any OpenAI-compatible Chat Completions server.

- `model`: `OpenAIModel` itself, and what a model costs (`Price`).
- `messages`: the engine's transcript as Chat Completions messages, sized to fit the model.
- `schema`: the built-in tools as function tools; `stream`: one streamed reply put together.
- `reader`: the model's own I/O thread; `errors`: what a failed call means for the run.
- `prompts/system.md`: the system prompt.
"""

from engine_adapter.engines.builtin.models.openai.errors import Where, judge, server_message
from engine_adapter.engines.builtin.models.openai.model import (
    OpenAIModel,
    Price,
    window_from_listing,
)

__all__ = ["OpenAIModel", "Price", "Where", "judge", "server_message", "window_from_listing"]

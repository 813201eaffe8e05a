"""What we answer: the client side of ACP, the calls an agent makes to the cockpit.

- `client`: `AcpClient`, every method an agent may call, answering permissions and `fs/*` itself
  and handing the rest to what it owns; `mapping`: `session/update` notifications turned into
  events; `permissions`: a permission request as a cockpit approval, and back; `operations`:
  what the cockpit's own operations share (ids, the approval gate, their rows).
- `files` (`fs/*`: regular files inside the workspace only), `terminals` and `terminal_calls`
  (`terminal/*`: commands in the sandbox and their own scope), `elicitation` and `questions` (an
  agent's questions: forms and links), `commands` (the commands it offers), `notes` (a denial's
  reason passed on).
"""

from engine_adapter.engines.acp.client.client import AcpClient, client_capabilities
from engine_adapter.engines.acp.client.files import Workspace
from engine_adapter.engines.acp.client.mapping import SessionUpdate, UpdateMapper, block_text
from engine_adapter.engines.acp.client.notes import offers_steering

__all__ = [
    "AcpClient",
    "SessionUpdate",
    "UpdateMapper",
    "Workspace",
    "block_text",
    "client_capabilities",
    "offers_steering",
]

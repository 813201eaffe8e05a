"""Engines behind a `Session`: each is an `AgentRunner`.

- `builtin`: the built-in agent loop (tools with permission tiers, phases, verification) driven
  by a pluggable model; its offline scripted model is what `cockpit demo` runs.
"""

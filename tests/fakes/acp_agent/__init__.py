"""The ACP test agent (`agent.py`, run as its own process), its session features, the helpers
that drive it through a Session, and where the real agents from npm are installed."""

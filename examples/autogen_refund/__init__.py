"""A flight-refund Swarm that hands off to a human for approval, on AutoGen AgentChat (see README.md)."""

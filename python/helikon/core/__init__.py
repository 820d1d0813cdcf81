"""Core primitives: items, events, the model and tool protocols, the agent and its loop."""

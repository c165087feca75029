"""Multi-turn agentic replay: lanes of sessions, exact prompts, per-turn and cache metrics."""

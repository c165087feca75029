"""Agentic traces: sessions of turns with growing context, subagent forks and idle gaps.

Readers for the Weka trace format InferenceX's agentic benchmark replays (`weka`), a
hand-writable JSONL format of inferbench's own (`jsonl`), a seeded generator (`synth`),
and the context-length rule (`context`). All of them produce `model.TraceSet`.
"""

"""inferbench.core: the objects that cross stage boundaries, and the conventions they share.

A leaf package: it imports nothing else of inferbench, so every stage may import it.

model.py        FrozenModel, the one base of immutable, strict pydantic models
job.py          the wire `Job` (InferenceX field names) and its fingerprint
status.py       JobStatus, PointStatus, RunPhase: what happened, as enums end to end
outcome.py      PointOutcome, Outcome (`outcome.json`), StoredOutcome (the store's row)
lengths.py      the max-model-len margin (isl + osl + 256)
seqlen.py       sequence-length names (1k1k, 8k1k, 1000_1000)
concurrency.py  concurrency expansion (ranges, lists, filters) and concurrency-list parsing
cpus.py         the cores this process may run on (parallel parsing and ingest)
"""

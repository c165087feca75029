"""inferbench.core: the objects that cross stage boundaries, and the conventions they share.

A leaf package: it imports nothing else of inferbench, so every stage may import it.

model.py        FrozenModel (immutable, strict) and LenientModel (immutable, other keys ignored)
job.py          the wire `Job` (InferenceX field names) and its fingerprint
status.py       JobStatus, PointStatus, RunPhase: what happened, as enums end to end
outcome.py      PointOutcome, Outcome (`outcome.json`), StoredOutcome (the store's row)
rundir.py       a run directory's files as records (run.json, jobs.json, env.json, ...)
lengths.py      max-model-len: the margin (isl + osl + 256) and the fallback of a job
seqlen.py       sequence-length names (1k1k, 8k1k, 1000_1000)
concurrency.py  concurrency expansion (ranges, lists, filters) and concurrency-list parsing
cpus.py         the cores this process may run on (parallel parsing and ingest)
errors.py       InputError and its kin: the file, line, key and fix of a bad input
fsio.py         atomic writes, with the hint for a full disk or a read-only folder
fsread.py       reading an input file: a regular file only, never more than a cap
lifetime.py     child processes die with their parent, whatever signal ends it
redact.py       secrets kept out of logs and results
"""

"""inferbench.matrix: master configs -> sweep jobs.

(the Job model, concurrency expansion and sequence-length names live in inferbench.core)
filters.py  SweepFilters, EvalMode, config-key selection
evals.py    run-eval marking
expand.py   expand_project / expand_masters
changed.py  --changed-since: jobs of the changelog entries appended since a revision
output.py   JSON list, chunked GitHub Actions matrix, table
api.py      sweep_tree / sweep_project, the library call behind `inferbench sweep`
"""

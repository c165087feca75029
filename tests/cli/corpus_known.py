"""Corpus cases that still fail, each for a reason named in the report of issue 16.

The test marks them xfail(strict=True): fixing one makes its test fail until it is taken
off this list, so the list only shrinks. It is empty: every case of the corpus passes. A
case added for a failure not fixed yet goes here with its reason in a comment.
"""

KNOWN_FAILURES: frozenset[str] = frozenset()

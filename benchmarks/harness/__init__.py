"""Code that only tests and benchmarks run, kept out of the installed package.

`python benchmarks/<name>.py` finds it beside the script; pytest finds it through
`pythonpath = ["benchmarks"]` in pyproject.toml, the one place that path is set.
"""

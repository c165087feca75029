"""GPU power and clocks while a point runs: vendor tools in a process of their own.

`parse` reads what nvidia-smi, amd-smi and a DCGM exporter print; `sampler` runs one of
them beside the server for the length of a point and writes one CSV of samples that the
results stage integrates into joules per token.
"""

"""Run a single-node job the way InferenceX does: through the tree's own benchmark script.

locate.py    which `benchmarks/single_node/...sh` the launchers pick for a job
contract.py  the environment benchmark-tmpl.yml and the launchers give that script
exports.py   what a launcher passes into its container (`--export=ALL,K=V`, `-e K=V`)
stage.py     the container paths as folders of the run, and the staged copy of the script
stubs.py     recording stand-ins for engines and for what must not run on a planner
capture.py   run the staged script under the stubs: the engine command lines it starts
jobtools.py  what a local run puts first on PATH (the job's python3, no installs, GPU tools)
aiperfshim.py  `aiperf profile` as `inferbench replay` (the stand-in `uv venv` leaves)
execute.py   run the staged script for real, one point per concurrency
postprocess.py  the workflow's processing of a point's outputs, with the tree's programs
"""

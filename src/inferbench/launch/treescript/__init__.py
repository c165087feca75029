"""Run a single-node job the way InferenceX does: through the tree's own benchmark script.

locate.py    which `benchmarks/single_node/...sh` the launchers pick for a job
contract.py  the environment benchmark-tmpl.yml and the launchers give that script
stage.py     a workspace holding a copy of the script with `/workspace` mapped onto it
stubs.py     recording stand-ins for engines and for what must not run on a planner
capture.py   run the staged script under the stubs: the engine command lines it starts
"""

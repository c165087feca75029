"""Hostile catalog and job values through every plan renderer: nothing they carry executes.

Each value is a shell payload (`$(touch CANARY)`, backticks, `'; touch CANARY; '`, a line
break followed by a command, ...) or arbitrary text. The renderers either refuse it with an
input error, or render it so that: the sbatch script passes `bash -n`, runs without creating
the canary and still writes its exit status; every printed command line parses back
(`shlex.split`) to exactly the argv that runs; srtslurm.yaml and recipe.yaml load back (with
PyYAML, as srtctl reads them) to exactly the values given.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from inferbench.config.cluster import load_cluster
from inferbench.core.errors import InputError
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.plan import Engine
from inferbench.launch.planner import PlanOptions, local_plan
from inferbench.launch.sbatch import render_sbatch
from inferbench.launch.shellsafe import check_cluster, has_control
from inferbench.launch.site import SlurmSite, site_from_cluster
from inferbench.launch.srtplan import dump_yaml

from .conftest import job_dict

_SCRATCH = Path(tempfile.mkdtemp(prefix="ib-quoting-"))
CANARY = _SCRATCH / "CANARY"
set_hypothesis_home_dir(str(_SCRATCH / "hypothesis"))  # its caches go to tmp, not the repo
_TOUCH = f"touch {CANARY}"
_PAYLOADS = [
    f"$({_TOUCH})",
    f"`{_TOUCH}`",
    f"'; {_TOUCH}; '",
    f'"; {_TOUCH}; "',
    f"\n{_TOUCH}\n",
    f"x\r\n{_TOUCH}",
    f"a && {_TOUCH}",
    f"a | {_TOUCH}",
    f"a; {_TOUCH} #",
    f"$(echo {_TOUCH} | sh)",
    "${IFS}" + _TOUCH.replace(" ", "${IFS}"),
]
_SHELLY = st.text(alphabet=st.sampled_from(list("ab9 $`'\";&|()<>{}*?!#~\\\n\t=-/.:,%\x85\u2028")))
hostile = st.one_of(
    st.builds(lambda a, p, b: a + p + b, st.text(max_size=4), st.sampled_from(_PAYLOADS), _SHELLY),
    _SHELLY,
    st.text(max_size=20),
)
_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _no_canary() -> None:
    assert not CANARY.exists(), "a payload executed"


@_SETTINGS
@given(account=hostile, partition=hostile, time_limit=hostile, directive=hostile, mount=hostile)
def test_sbatch_script_runs_no_payload(
    account: str, partition: str, time_limit: str, directive: str, mount: str
) -> None:
    site = SlurmSite(
        name="c",
        partition=partition or None,
        account=account or None,
        time_limit=time_limit or None,
        sbatch_directives=(f"--comment={directive}",),
        container_mounts=(mount,),
        python="true",  # the allocation's command; the directives are what is under test
    )
    job_dir = Path(tempfile.mkdtemp(dir=_SCRATCH))
    values = [account, partition, time_limit, directive]
    try:
        script = render_sbatch("inferbench-x", site, 0, str(job_dir))
    except InputError as exc:
        assert any(has_control(v) for v in values), exc
        return
    assert not any(has_control(v) for v in values)
    path = job_dir / "sbatch.sh"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0
    directives = [line for line in script.splitlines() if line.startswith("#SBATCH ")]
    assert len(directives) == 4 + sum(bool(v) for v in (account, partition, time_limit)) + 1
    ran = subprocess.run(["bash", str(path)], cwd=job_dir, capture_output=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    assert (job_dir / "exit-status").read_text().strip() == "0"
    _no_canary()


@_SETTINGS
@given(model=hostile, model_path=hostile, setting=hostile)
def test_local_command_lines_parse_back_to_their_argv(
    model: str, model_path: str, setting: str
) -> None:
    # a single-node Job has no additional-settings of its own: set the deployment's directly
    dep = replace(
        deployment_from_dicts([job_dict(model=model or "m", conc=4)]), settings={"FOO": setting}
    )
    for engine in (Engine("vllm"), Engine("sglang"), Engine("trtllm"), Engine.SIM):
        plan = local_plan(dep, engine, PlanOptions(model_path=model_path or None))
        for proc in plan.processes:
            words = shlex.split(proc.shell_line())
            env = [f"{k}={v}" for k, v in sorted(proc.env.items())]
            assert words == (["env", *env] if env else []) + list(proc.argv)
            line = proc.shell_line().replace("\n", " ")
            assert "\n" not in line or has_control(model + model_path + setting)
    _no_canary()


def _cluster_yaml(root: Path, values: dict[str, Any]) -> Path:
    doc = {
        "name": "hostile",
        "runners": ["b200-multinode"],
        "gpu": "b200",
        "gpus-per-node": 8,
        "scheduler": {
            "type": "slurm",
            "account": values["account"],
            "partition": values["partition"],
            "time-limit": values["time"],
            "sbatch-directives": {"comment": values["directive"]},
            "mounts": {"/data": values["mount"]},
            "container-runtime": "pyxis",
        },
        "models": [
            {
                "model": "m/m",
                "model-prefix": "m",
                "precision": "fp4",
                "path": values["path"],
                "alias": values["alias"],
            }
        ],
        "containers": {"dynamo-vllm": values["container"]},
    }
    path = root / "hostile.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@_SETTINGS
@given(
    values=st.fixed_dictionaries(
        {
            k: hostile.filter(bool)
            for k in ("account", "partition", "time", "directive", "mount")
            + ("path", "alias", "container")
        }
    )
)
def test_catalog_values_reach_srtslurm_yaml_and_sbatch_intact_or_are_refused(
    values: dict[str, str],
) -> None:
    root = Path(tempfile.mkdtemp(dir=_SCRATCH))
    try:
        entry = load_cluster(_cluster_yaml(root, values))
    except InputError as exc:
        # the catalog's own schema refused it; a control character where it is written
        if "line break or control" in exc.message:
            assert any(has_control(v) for v in values.values())
            assert exc.location.file is not None and exc.location.line is not None
        return
    check_cluster(entry)  # what the launch asks again: nothing left to refuse
    assert not any(has_control(v) for v in values.values())
    cluster = entry.cluster
    written = dump_yaml(cluster.srtslurm_config())
    assert yaml.safe_load(written) == cluster.srtslurm_config()  # PyYAML, as srtctl reads it
    recipe = {"model": {"path": values["alias"], "container": values["container"]}}
    assert yaml.safe_load(dump_yaml(recipe)) == recipe
    script = render_sbatch("inferbench-x", site_from_cluster(cluster), 8, str(root))
    assert subprocess.run(["bash", "-n"], input=script.encode()).returncode == 0
    _no_canary()


def test_a_newline_in_the_account_is_refused_with_its_line(tmp_path: Path) -> None:
    values = dict.fromkeys(("partition", "time", "directive", "mount", "path", "alias"), "x")
    values |= {"account": "acct\nrm -rf ~", "container": "img"}
    with pytest.raises(InputError) as err:
        load_cluster(_cluster_yaml(tmp_path, values))  # `check` and `sweep` refuse it too
    text = err.value.render()
    assert "hostile.yaml:" in text and "scheduler.account" in text and "line break" in text

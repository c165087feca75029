"""`inferbench check` on the real InferenceX tree: per-rule counts pinned, every remaining
error documented in docs/conformance.md as a real defect, and no error on a recipe the real
srtctl accepts unless that document names the defect.

The changelog rules (IB5xx) are pinned by the changelog conformance tests, not here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, CheckReport, check_tree
from inferbench.checks.finding import Finding, Severity

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "conformance.md"
RECIPES = "benchmarks/multi_node/srt-slurm-recipes"

# rule -> findings on the real tree (docs/conformance.md, "after" columns). IB405 reads the
# cluster files `clusters import` makes of the launchers, so a tree without a catalog gives
# the findings a tree with one gives.
# IB212: the 214 recipe files no active entry names and no launcher routes to, once (they
# carried 4 IB205, 1 IB209 and 6 IB210 before); IB208 judges what each recipe runs.
EXPECTED = {
    "IB001": 1, "IB002": 1, "IB101": 8, "IB201": 3, "IB203": 18, "IB208": 3, "IB210": 2,
    "IB212": 1, "IB301": 2, "IB307": 2, "IB310": 4, "IB405": 32, "IB601": 2,
}  # fmt: skip
EXPECTED_WITH_SRT_SLURM = {
    "IB001": 1, "IB002": 2, "IB101": 8, "IB201": 3, "IB203": 18, "IB205": 2, "IB208": 11,
    "IB210": 2, "IB212": 1, "IB301": 2, "IB302": 6, "IB303": 2, "IB307": 9, "IB310": 4,
    "IB405": 32, "IB601": 2, "IB602": 5,
}  # fmt: skip
# each job judged at the srt-slurm ref its launcher clones (the refs bundle): the 19 errors
# one checkout gives that are false at the job's ref are gone
EXPECTED_AT_REFS = {
    "IB001": 1, "IB002": 2, "IB101": 8, "IB201": 3, "IB203": 4, "IB205": 2, "IB208": 12,
    "IB210": 2, "IB212": 1, "IB301": 2, "IB302": 6, "IB307": 6, "IB310": 4, "IB405": 32,
    "IB601": 2, "IB602": 5,
}  # fmt: skip
# with the cluster catalog `inferbench clusters import` writes from the launchers: the same
# findings (IB301/IB401 read the aliases the launchers' srtslurm.yaml defines from the
# catalog, IB405 the weights each alias holds)
EXPECTED_WITH_CATALOG = EXPECTED_WITH_SRT_SLURM
# warnings before this tree's findings were made ones a reviewer accepts (IB208 on recipes
# no active entry runs and on 1.01-1.5x over-subscription, IB205 on spread workers), and
# the most there may be now: half
WARNINGS_BEFORE = {"tree": 199, "with-srt-slurm": 306}
SECTION = "## Every remaining error, and why it is a real defect"
FALSE_SECTION = "## Errors one checkout gives that are false at the job's ref"
# refs the launchers clone that the bundle does not hold (forks, pins of other commits)
NOT_IN_BUNDLE = {
    "cquil11/srt-slurm-nv@cam/sa-submission-q2-2026": 31,
    "edwingao28/srt-slurm@6fc1bed01a0b82dae0088a105c03ce0cfb353443": 8,
    "functionstackx/srt-slurm-nv@df5baa93f4caf5169dea2a4236ad2cc742fe40e7": 4,
    "NVIDIA/srt-slurm@217f9438": 9,
    "NVIDIA/srt-slurm@04e87fcc505d6d851451781a5499ca19a02ec2b4": 5,
}
CATALOG_SECTION = "## With a cluster catalog imported from the launchers"


@pytest.fixture(scope="module")
def report(inferencex_tree: Path) -> CheckReport:
    return check_tree(inferencex_tree)


@pytest.fixture(scope="module")
def report_srt(inferencex_tree: Path, srt_slurm_tree: Path) -> CheckReport:
    return check_tree(inferencex_tree, CheckOptions(srt_slurm=srt_slurm_tree))


@pytest.fixture(scope="module")
def report_refs(inferencex_tree: Path, srt_slurm_refs_bundle: Path) -> CheckReport:
    return check_tree(inferencex_tree, CheckOptions(srt_slurm=(srt_slurm_refs_bundle,)))


@pytest.fixture(scope="module")
def report_catalog(
    inferencex_tree: Path, srt_slurm_tree: Path, tmp_path_factory: pytest.TempPathFactory
) -> CheckReport:
    """`clusters import` into a copy of the real tree, then `check` of that copy."""
    tree = tmp_path_factory.mktemp("catalog") / "inferencex"
    shutil.copytree(inferencex_tree, tree, symlinks=True)
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "clusters", "import", "--root", "."],
        cwd=tree, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(list((tree / "clusters").glob("*.yaml"))) > 10
    return check_tree(tree, CheckOptions(srt_slurm=srt_slurm_tree))


def _counts(report: CheckReport) -> dict[str, int]:
    return dict(
        sorted(Counter(f.rule for f in report.findings if not f.rule.startswith("IB5")).items())
    )


def test_per_rule_counts(report: CheckReport) -> None:
    assert _counts(report) == EXPECTED


def test_per_rule_counts_with_srt_slurm(report_srt: CheckReport) -> None:
    assert _counts(report_srt) == EXPECTED_WITH_SRT_SLURM


def test_per_rule_counts_at_each_jobs_ref(report_refs: CheckReport) -> None:
    assert _counts(report_refs) == EXPECTED_AT_REFS


def test_the_issues_false_errors_are_gone_at_the_jobs_ref(report_refs: CheckReport) -> None:
    """IB203 on telemetry.provider / benchmark.tokenizer_mode (the refs' schemas have them),
    IB303/IB307 on gb200-fp8/8k1k/low-latency.yaml (its job runs the cquil11 fork)."""
    for finding in _errors(report_refs):
        assert "telemetry.provider" not in finding.message
        assert "tokenizer_mode" not in finding.message
        assert not str(finding.file).endswith("gb200-fp8/8k1k/low-latency.yaml")


def test_refs_not_in_the_bundle_are_named_and_no_other(
    report_refs: CheckReport, srt_slurm_refs_bundle: Path
) -> None:
    """Every ref a job runs that the bundle holds was used; IB002 names the others, with
    the pairs not checked, and docs/conformance.md names them too."""
    from inferbench.config.srt_slurm_refs import SrtSlurmSources

    line = next(f.message for f in report_refs.findings if "not checked at the" in f.message)
    named = dict(
        (label, int(count))
        for count, label in re.findall(r"(\d+) ([\w.-]+/[\w.-]+@\S+) \(not given", line)
    )
    assert named == NOT_IN_BUNDLE
    sources = SrtSlurmSources([srt_slurm_refs_bundle])
    for label in named:
        repository, _, ref = label.partition("@")
        assert sources.at(repository, ref) is None, label
    text = DOC.read_text()
    assert all(label.split("@")[1][:8] in text for label in named)


def test_per_rule_counts_with_an_imported_catalog(report_catalog: CheckReport) -> None:
    """No IB301/IB401 false positive where the catalog comes from the launchers: container
    aliases of the job's image, `${MODEL_PREFIX}` and override aliases, defaulted paths."""
    assert _counts(report_catalog) == EXPECTED_WITH_CATALOG


@pytest.mark.parametrize("which", sorted(WARNINGS_BEFORE))
def test_warnings_fell_by_half(report: CheckReport, report_srt: CheckReport, which: str) -> None:
    """Changelog warnings included: IB501 on the history InferenceX accepted is one now."""
    chosen = report_srt if which == "with-srt-slurm" else report
    assert chosen.warnings <= WARNINGS_BEFORE[which] // 2


def test_changelog_history_is_no_error(report: CheckReport) -> None:
    """24 old entries name keys that are gone (InferenceX's validator accepted each as it was
    appended): warnings without --base, never a failed run."""
    history = [f for f in report.findings if f.rule == "IB501"]
    assert len(history) == 24
    assert {f.severity for f in history} == {Severity.WARNING}


def test_launchers_and_their_imported_catalog_give_the_same_findings(
    report_srt: CheckReport, report_catalog: CheckReport, srt_slurm_tree: Path
) -> None:
    def seen(report: CheckReport) -> Counter[tuple[str, str, str]]:
        return Counter(
            (f.rule, _shown(f, report.root, srt_slurm_tree), f.message)
            for f in report.findings
            if f.file is not None and f.rule != "IB002"
        )

    assert seen(report_srt) == seen(report_catalog)


def _shown(finding: Finding, root: Path, srt_slurm: Path) -> str:
    """Where, as docs/conformance.md writes it: relative to the InferenceX root, or
    `srt-slurm: recipes/...` in the checkout, `NVIDIA/srt-slurm@<ref>: recipes/...` in a ref."""
    from inferbench.config.srt_slurm_refs import unpacked_label

    assert finding.file is not None
    path = finding.file.resolve()
    unpacked = unpacked_label(path)
    if path.is_relative_to(root.resolve()):
        text = path.relative_to(root.resolve()).as_posix()
    elif unpacked is not None:
        text = f"{unpacked[1]}: " + path.relative_to(unpacked[0]).as_posix()
    else:
        text = "srt-slurm: " + path.relative_to(srt_slurm.resolve()).as_posix()
    return f"{text}:{finding.line}"


def _as_checkout(where: str) -> str:
    """A ref's file as the one checkout names it (the same recipe there)."""
    return re.sub(r"^[\w.-]+/srt-slurm@[^:]+: ", "srt-slurm: ", where)


def _documented_checkout() -> set[tuple[str, str]]:
    """The errors one checkout gives: those at each job's ref, and the false ones."""
    at_refs = {(rule, _as_checkout(where)) for rule, where in _documented()}
    return at_refs | _documented(FALSE_SECTION)


def _documented(section: str = SECTION) -> set[tuple[str, str]]:
    """The (rule, where) rows of one `## ` section of docs/conformance.md."""
    text = DOC.read_text()
    assert section in text, section
    body = text.split(section, 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (IB\d{3}) \| `([^`]+)` \| (.+) \|$", body, re.M)
    assert all(why.strip() for _, _, why in rows)
    return {(rule, where) for rule, where, _ in rows}


def _errors(report: CheckReport) -> list[Finding]:
    return [
        f for f in report.findings if f.severity is Severity.ERROR and not f.rule.startswith("IB5")
    ]


def test_every_remaining_error_is_documented_as_a_defect(
    report_refs: CheckReport, inferencex_tree: Path, srt_slurm_tree: Path
) -> None:
    """At each job's own ref: every error docs/conformance.md calls a real defect."""
    documented = _documented()
    errors = {(f.rule, _shown(f, inferencex_tree, srt_slurm_tree)) for f in _errors(report_refs)}
    assert errors - documented == set(), "add a line to docs/conformance.md for each"
    assert documented - errors == set(), "docs/conformance.md names errors that are gone"


def test_one_checkouts_errors_are_those_and_the_documented_false_ones(
    report_srt: CheckReport, inferencex_tree: Path, srt_slurm_tree: Path
) -> None:
    documented = _documented_checkout()
    errors = {(f.rule, _shown(f, inferencex_tree, srt_slurm_tree)) for f in _errors(report_srt)}
    assert errors == documented
    assert len(_documented(FALSE_SECTION)) == 16  # 19 findings: IB303 x2, IB307 x3 share rows


def test_every_error_with_an_imported_catalog_is_documented(
    report_catalog: CheckReport, srt_slurm_tree: Path
) -> None:
    extra = _documented(CATALOG_SECTION)
    root = report_catalog.root  # the copy the catalog was imported into
    errors = {(f.rule, _shown(f, root, srt_slurm_tree)) for f in _errors(report_catalog)}
    assert errors - (_documented_checkout() | extra) == set(), "add a line to the docs"
    assert extra - errors == set(), "docs/conformance.md names catalog errors that are gone"


@pytest.fixture(scope="module")
def srtctl_rejects(srtctl_python: Path, inferencex_tree: Path, srt_slurm_tree: Path) -> set[Path]:
    """Recipe files the real srtctl rejects (any variant), from both trees."""
    rejected: set[Path] = set()
    for root in (inferencex_tree / RECIPES, srt_slurm_tree / "recipes"):
        done = subprocess.run(
            [str(srtctl_python), str(HERE / "srtctl_verdicts.py"), str(root)],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        verdicts = json.loads(done.stdout)
        rejected |= {(root / rel).resolve() for rel, v in verdicts.items() if any(v.values())}
    return rejected


@pytest.mark.slow
def test_no_error_on_a_recipe_srtctl_accepts_unless_documented(
    report_srt: CheckReport, srtctl_rejects: set[Path], inferencex_tree: Path, srt_slurm_tree: Path
) -> None:
    documented = _documented_checkout()
    recipe_roots = ((inferencex_tree / RECIPES).resolve(), (srt_slurm_tree / "recipes").resolve())
    for finding in _errors(report_srt):
        assert finding.file is not None
        path = finding.file.resolve()
        if not any(path.is_relative_to(r) for r in recipe_roots):
            continue
        if finding.rule == "IB203":  # a schema error only where srtctl itself says no
            assert path in srtctl_rejects, finding
        elif path not in srtctl_rejects:
            where = _shown(finding, inferencex_tree, srt_slurm_tree)
            assert (finding.rule, where) in documented, finding


def test_cli_on_the_real_tree(inferencex_tree: Path) -> None:
    """Exit 1 (errors found), never 2 or a traceback; GitHub output capped with a summary."""
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "check", "--root", ".", "--format", "github"],
        cwd=inferencex_tree, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert lines[-1].startswith("::notice title=inferbench check::")
    assert "more not annotated" in lines[-1]
    assert all("file=/" not in line for line in lines)  # relative to the root


@pytest.mark.parametrize("srt_slurm", ["", "checkout", "refs"])
def test_cached_runs_print_what_an_uncached_run_prints(
    inferencex_tree: Path, srt_slurm_tree: Path, tmp_path: Path, srt_slurm: str,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    """Byte for byte, on the JSON output: no cache, a cold cache (every file parsed), a warm
    parse cache (the check result cache emptied), and the stored check result."""
    args = [sys.executable, "-m", "inferbench.cli.main", "check", "--root", str(inferencex_tree),
            "--format", "json"]  # fmt: skip
    if srt_slurm == "checkout":
        args += ["--srt-slurm", str(srt_slurm_tree)]
    elif srt_slurm == "refs":  # refs unpacked into the cache name findings by their ref
        args += ["--srt-slurm", str(request.getfixturevalue("srt_slurm_refs_bundle"))]
    cache = tmp_path / "cache"

    def run(**env: str) -> tuple[int, str]:
        environ = {k: v for k, v in os.environ.items() if k != "INFERBENCH_NO_CACHE"}
        environ.update(INFERBENCH_CACHE_DIR=str(cache), **env)
        done = subprocess.run(args, env=environ, capture_output=True, text=True, timeout=300,
                              check=False)  # fmt: skip
        assert "Traceback" not in done.stderr
        return done.returncode, done.stdout

    uncached = run(INFERBENCH_NO_CACHE="1")
    assert uncached[0] == 1 and json.loads(uncached[1])
    assert run() == uncached  # cold: parses every file, stores parses and the result
    assert any((cache / "check-v1").rglob("*")) and any((cache / "yaml-v1").rglob("*"))
    assert '"file": "/' not in uncached[1]  # no absolute (cache) path in any finding
    assert run() == uncached  # the stored result
    shutil.rmtree(cache / "check-v1")
    assert run() == uncached  # the parse cache alone

"""Story: a team copies the shipped CI workflow or Kubernetes manifests to run the nightly sharded.

Kubernetes cannot run here, so the templates are read as YAML and checked for what makes them
work: a matrix (or an Indexed Job) whose shard count matches every `--shard I/N` it runs, a merge
step after the shards that reads their folders, and only `chaos` commands and options that exist.
"""

import re
import shlex
from pathlib import Path

import typer.main
import yaml

from chaos.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
CHAOS = re.compile(r"python -m chaos (.+?)(?:\|\||$)", re.S)


def chaos_calls(script: str) -> list[list[str]]:
    """Each `python -m chaos ...` of a shell script as its words (line continuations joined)."""
    script = re.sub(r"\$\{\{[^}]*\}\}", "EXPR", script.replace("\\\n", " "))  # a GitHub expression is one word
    return [shlex.split(m.group(1).strip(), posix=True) for line in script.splitlines() for m in [CHAOS.search(line)] if m]


def check_exists(words: list[str]) -> str:
    """The command is one of chaos's, and each --option it passes is one of that command's."""
    cli = typer.main.get_command(app)
    cmd = cli.commands.get(words[0])  # type: ignore[attr-defined]
    assert cmd is not None, f"chaos has no command {words[0]!r}"
    known = {o for p in cmd.params for o in getattr(p, "opts", [])}
    for w in words[1:]:
        if w.startswith("-"):
            assert w.split("=")[0] in known, f"chaos {words[0]} has no option {w}"
    return words[0]


def shard_counts(words: list[str]) -> set[str]:
    return {words[i + 1].split("/")[-1].strip('"') for i, w in enumerate(words[:-1]) if w == "--shard"}


def test_the_github_workflow_runs_every_shard_then_merges():
    wf = yaml.safe_load((ROOT / "examples/ci/nightly-sharded.yml").read_text())
    jobs = wf["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    n = len(shards)
    assert shards == list(range(1, n + 1)) and n >= 2
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    runs = [s["run"] for s in jobs["shard"]["steps"] if "run" in s]
    calls = [c for r in runs for c in chaos_calls(r)]
    assert [check_exists(c) for c in calls] == ["nightly"]
    assert shard_counts(calls[0]) == {str(n)} and "${{ matrix.shard }}/" + str(n) in " ".join(runs)
    # queue mode when the repository has the secret: a Postgres queue every runner reaches
    (step,) = [s for s in jobs["shard"]["steps"] if "run" in s and "chaos nightly" in s["run"]]
    assert step["env"]["QUEUE"] == "${{ secrets.CHAOS_QUEUE_DSN }}" and '${QUEUE:+--shard-queue "$QUEUE"}' in step["run"]
    uploads = [s for s in jobs["shard"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["if"] == "always()"
    merge = jobs["merge"]
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    assert any(s.get("uses", "").startswith("actions/download-artifact") for s in merge["steps"])
    merges = [c for s in merge["steps"] if "run" in s for c in chaos_calls(s["run"])]
    assert [check_exists(c) for c in merges] == ["merge"]


def test_the_kubernetes_indexed_job_and_its_merge_job_are_consistent():
    docs = list(yaml.safe_load_all((ROOT / "examples/k8s/nightly-shards.yaml").read_text()))
    (job,) = [d for d in docs if d["kind"] == "Job"]
    (pvc,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    spec = job["spec"]
    assert job["apiVersion"] == "batch/v1" and spec["completionMode"] == "Indexed"
    n = spec["completions"]
    assert spec["parallelism"] == n >= 2
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (c,) = pod["containers"]
    assert "chaos-racer" in c["image"]  # built from compose/Dockerfile
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["SHARDS"] == str(n)
    script = " ".join(c["command"][2:] + c["args"])
    assert "JOB_COMPLETION_INDEX + 1" in script
    calls = chaos_calls(script)
    assert [check_exists(w) for w in calls] == ["nightly"]
    assert shard_counts(calls[0]) == {"$SHARDS"}
    # queue mode (the default): a shared queue folder on the results volume, per night
    assert env["QUEUE"] and '${QUEUE:+--shard-queue "/results/$night/queue"}' in script
    check_exists(["nightly", "--shard-queue"])
    claim = {v["name"]: v for v in pod["volumes"]}["results"]["persistentVolumeClaim"]["claimName"]
    assert claim == pvc["metadata"]["name"]
    assert any(m["mountPath"] == "/results" for m in c["volumeMounts"])

    (merge,) = list(yaml.safe_load_all((ROOT / "examples/k8s/nightly-merge.yaml").read_text()))
    assert merge["kind"] == "Job" and "completionMode" not in merge["spec"]
    mpod = merge["spec"]["template"]["spec"]
    assert mpod["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim
    (mc,) = mpod["containers"]
    calls = chaos_calls(" ".join(mc["args"]))
    assert [check_exists(w) for w in calls] == ["merge"]
    # the merge reads the folders the shards write
    assert "shard-*" in " ".join(mc["args"]) and "/results/$night/shard-$i" in script.replace('"', "")

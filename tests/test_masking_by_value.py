"""What the user declares secret is masked by value, whatever its shape (issue 40, point 4).

A pattern corpus cannot know an opaque token or a password written as plain words. Declared here:
an environment variable named in ``CHAOS_SECRETS``, a DSN password held in an environment
variable, and a secret-named workload parameter. The user's workload echoes each value bare (a
debug print, an effect named after it, an error quoting it); no file of the run folder and nothing
on the terminal holds any of them.
"""

from __future__ import annotations

import json

from kits.robustkit import chaos

OPAQUE = "zq81-opaque-7c1e-4b9a"  # no known shape: only its declaration masks it
DSN_PW = "Plain-Dsn-Pw-9913"
PARAM = "correct horse battery staple 77"


def test_declared_secrets_are_masked_by_value_everywhere(tmp_path):
    scenario = {
        "name": "declared_secrets",
        "kind": "kill_sweep",
        "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
        "workload": "tests.workloads.secret_workloads:raising",
        "workload_params": {
            "forms": [f"token {OPAQUE}", f"the service password is {DSN_PW}", f"passphrase was {PARAM}"],
            "vault_passphrase": PARAM,
        },
        "resume": "none",
        "trials": 1,
        "kill_points": ["put(step=1,source=loop):after"],
    }
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(scenario))
    env = {"CHAOS_SECRETS": "TEAM_OPAQUE", "TEAM_OPAQUE": OPAQUE, "BILLING_URL": f"https://billing:{DSN_PW}@api.internal/v1"}
    p = chaos(["run", str(path), "--out", str(tmp_path / "out"), "--keep-work"], tmp_path / "state", env=env)
    assert p.returncode in (1, 2), p.stdout + p.stderr  # the resume's error is the user's: an unknown verdict
    run = next(d for d in (tmp_path / "out" / "declared_secrets").iterdir() if d.is_dir() and not d.is_symlink())
    files = [f for f in run.rglob("*") if f.is_file() and not f.name.startswith("checkpoints.sqlite")]
    assert any(f.name.startswith("racer-") and f.suffix == ".log" for f in files)  # the debug prints were kept
    for secret in (OPAQUE, DSN_PW, PARAM):
        leaks = [str(f.relative_to(run)) for f in files if secret.encode() in f.read_bytes()]
        assert leaks == [], (secret, leaks)
        assert secret not in p.stdout + p.stderr
    assert "***" in (run / "journal.jsonl").read_text()  # masked, not dropped: the trials were recorded

"""Secrets never reach a file a person reads: DSN and URL passwords, secret settings, private keys
and API tokens are masked; everything else is left exactly as it was."""

from __future__ import annotations

import pytest

from chaos.racer.redact import redact, redact_dsn, redact_obj

CASES = [
    ("postgresql://chaos:hunter2@db:5432/app", "postgresql://chaos:***@db:5432/app"),
    ("cannot connect to postgres://u:p%40ss@h/db: refused", "cannot connect to postgres://u:***@h/db: refused"),
    ("host=db user=chaos password=hunter2 dbname=app", "host=db user=chaos password=*** dbname=app"),
    ("ssh://root:toor@10.0.0.2:22", "ssh://root:***@10.0.0.2:22"),
    ("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY=***"),
    ('{"token": "abc.def.ghi"}', '{"token": "***"}'),
    ("secret: s3cr3t", "secret: ***"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----",
    ),
    ("use ghp_abcdefghijklmnopqrstuvwxyz0123 here", "use *** here"),
]
UNTOUCHED = [
    "put_writes(node=b,channels=log+branch:to:c):before#1",
    "effect 'b' fired 2x (trial c000-p011-r000)",
    "gate:True",
    "postgresql://chaos@db/app",
    "keys=3 effect_key=gate:True",
    "https://example.org/a:b",
]


@pytest.mark.parametrize("text,want", CASES)
def test_secrets_are_masked(text, want):
    assert redact(text) == want


@pytest.mark.parametrize("text", UNTOUCHED)
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_objects_are_redacted_at_any_depth_and_keep_their_shape():
    obj = {
        "store": {"dsn": "postgresql://u:pw@h/d", "password": "x", "table": "t"},
        "errors": ["OperationalError: password=pw rejected"],
        "n": 3,
        "ok": True,
    }
    assert redact_obj(obj) == {
        "store": {"dsn": "postgresql://u:***@h/d", "password": "***", "table": "t"},
        "errors": ["OperationalError: password=*** rejected"],
        "n": 3,
        "ok": True,
    }


def test_dsn_helper_kept_for_the_postgres_code():
    assert redact_dsn("postgresql://u:pw@h/d?password=x") == "postgresql://u:***@h/d?password=***"
    assert redact_dsn(None) is None


# issue 13: secret forms that escaped masking; each must come out without "hunter2"
SECRET_CORPUS = [
    "PGPASSWORD=hunter2 psql -h db",
    '{"db_pass": "hunter2"}',
    "postgresql://app:hunter2%40x@db:5432/app",
    "connect failed: pw=hunter2",
    "password='hunter2 two words' host=db",
    'password="hunter2 two words" host=db',
    "db_password: hunter2",
    "MY_API_TOKEN=hunter2",
    "auth=hunter2",
]


@pytest.mark.parametrize("text", SECRET_CORPUS)
def test_every_secret_form_is_masked(text):
    from chaos.racer.redact import redact

    out = redact(text)
    assert "hunter2" not in out and "two words" not in out, out


def test_a_secret_as_a_dictionary_key_is_masked_and_counts_stay():
    from chaos.racer.redact import redact_obj

    out = redact_obj({"postgresql://u:hunter2@h/db": 1, "sk-abcdefghijklmnopqrstuv": 2, "pw": "hunter2", "total_tokens": 7, "passed": 3})
    assert "hunter2" not in repr(out) and "sk-abcdefghij" not in repr(out)
    assert out["total_tokens"] == 7 and out["passed"] == 3


def test_the_ledger_masks_a_secret_in_an_effect_value_and_keeps_distinct_values_distinct(tmp_path):
    """An effect value that carries a secret (an answer such as {"password": ...}) was stored
    as is in ledger.sqlite. Now it is masked, and two different secrets stay two effect keys."""
    from chaos.racer.ledger import SqliteLedger

    ledger = SqliteLedger(str(tmp_path / "ledger.sqlite"), {"run_id": "r", "trial_id": "t"})
    ledger.append(task="gate", value="{'password': 'hunter2'}", thread_id="th")
    ledger.append(task="gate", value="{'password': 'swordfish'}", thread_id="th")
    _, inserted = ledger.append_once(task="gate", value="{'password': 'hunter2'}", thread_id="th")
    rows = ledger.rows(run_id="r")
    ledger.close()
    assert not inserted  # the same answer is the same effect, masked or not
    assert len({r["effect_key"] for r in rows}) == 2
    raw = b"".join(f.read_bytes() for f in tmp_path.iterdir())
    assert b"hunter2" not in raw and b"swordfish" not in raw

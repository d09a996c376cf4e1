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


# issue 24: the corpus of secret forms (tests/kits/secret_forms.py), each as text and as a setting
from kits.secret_forms import FORMS, KEYED, READABLE  # noqa: E402


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_every_form_of_the_corpus_is_masked_in_text(form):
    out = redact(form.text)
    assert form.secret not in out and "***" in out, out


@pytest.mark.parametrize("form", KEYED, ids=lambda f: f.name)
def test_a_setting_named_like_a_secret_has_its_value_masked(form):
    assert redact_obj({form.key: form.secret, "note": "kept"}) == {form.key: "***", "note": "kept"}


@pytest.mark.parametrize("text", READABLE)
def test_ordinary_text_of_the_corpus_is_left_alone(text):
    """The other half: a masker that masked everything would pass the tests above, not this one."""
    assert redact(text) == text


def test_chaos_own_field_names_are_never_taken_for_secrets():
    """redact_obj masks the value of a key named like a secret: no field of what a run writes
    (results, trial records, run.json, racer specs and results) may be named so, or its numbers
    would turn into "***"."""
    import typing

    from pydantic import BaseModel

    from chaos import records
    from chaos.racer import protocol
    from chaos.racer.redact import is_secret_name

    names: set[str] = set()
    for mod in (records, protocol):
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, BaseModel) and obj is not BaseModel:
                names |= set(obj.model_fields)
            elif isinstance(obj, type) and typing.is_typeddict(obj):
                names |= set(typing.get_type_hints(obj))
    assert len(names) > 50
    assert sorted(n for n in names if is_secret_name(n)) == []


def test_masking_a_json_file_keeps_it_json():
    """A file is masked by its kind: JSON stays JSON even when a secret sits in an escaped quote."""
    import json

    from chaos.racer.redact import redact_file_text

    doc = {"error": 'password="two words" rejected', "n": 3, "racer": {"db_pass": "hunter2"}}
    for text in (json.dumps(doc, indent=2), json.dumps(doc) + "\n" + json.dumps(doc) + "\n"):
        out = redact_file_text("x.json", text)
        assert "two words" not in out and "hunter2" not in out
        first = json.loads(out.splitlines()[0]) if "\n" in out.strip() and not out.startswith("{\n") else json.loads(out)
        assert first["n"] == 3 and first["racer"]["db_pass"] == "***"
    assert redact_file_text("x.json", json.dumps(doc | {"error": "fine"}, indent=2)).count("***") == 1


def test_an_effect_name_is_stored_masked_and_stays_one_effect(tmp_path):
    """ledger.sqlite stored effect names raw, a DSN with its password included."""
    from chaos.racer.ledger import SqliteLedger

    ledger = SqliteLedger(str(tmp_path / "ledger.sqlite"), {"run_id": "r", "trial_id": "t", "cell_id": "workload_params=api_token:hunter2"})
    for _ in range(2):
        ledger.append_once(task="sync postgresql://app:hunter2@db/app", value=None, thread_id="th")
    ledger.append(task="charge", value=None, thread_id="th")
    rows = ledger.rows(run_id="r")
    ledger.close()
    assert [r["task"] for r in rows][1] == "charge" and len(rows) == 2
    assert rows[0]["task"].startswith("sync postgresql://app:***") and rows[0]["effect_key"] == rows[0]["task"]
    assert rows[0]["cell_id"] == "workload_params=api_token:***"  # as the journal writes it
    raw = b"".join(f.read_bytes() for f in tmp_path.iterdir())
    assert b"hunter2" not in raw


def test_the_terminal_is_masked_whatever_prints_to_it(capsys):
    from rich.console import Console

    from chaos.cli.masked import MaskedStream

    Console(file=MaskedStream(), width=200).print("cell 1: Authorization: Bearer abcdefgh12345678 for c000-p001-r000")
    Console(file=MaskedStream(stderr=True), width=200).print("token=abcdefgh12345678 sha 9f86d081884c")
    out, err = capsys.readouterr()
    assert out.strip() == "cell 1: Authorization: Bearer *** for c000-p001-r000"
    assert err.strip() == "token=*** sha 9f86d081884c"


def test_a_log_tail_quoted_in_a_reason_leaks_no_half_of_a_secret():
    """A crashed racer's reason quotes the end of its log: a window starting inside a token let
    its second half through, no longer recognisable as a token."""
    from chaos.racer.redact import masked_tail

    log = b"starting\nAuthorization: Bearer abcdefgh12345678zyxwvut\nboom: password=hunter2\nexit\n"
    for n in range(5, len(log) + 1):
        tail = masked_tail(log, n)
        assert "hunter2" not in tail and "12345678zyx" not in tail and "zyxwvut" not in tail, (n, tail)
    assert masked_tail(log, 1000) == "starting\nAuthorization: Bearer ***\nboom: password=***\nexit\n"


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_masking_twice_changes_nothing(form):
    """Records are masked as the journal appends them and again when a stored run is copied or
    re-rendered: a mask must read as a mask, not as a new secret."""
    once = redact(form.text)
    assert redact(once) == once


def test_text_after_a_private_key_block_stays_readable():
    """A PEM block and a PGP block are masked from BEGIN to their own END, never to the end of the text."""
    from chaos.racer.redact import redact

    for label in ("RSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"):
        out = redact(f"key -----BEGIN {label}-----\nQmFzZTY0Qm9keQ\n-----END {label}----- then the report goes on")
        assert out.endswith("then the report goes on") and "QmFzZTY0Qm9keQ" not in out

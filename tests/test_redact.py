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

"""Keep secrets out of reports and logs: DSNs are recorded with their password replaced by ``***``.

Every place that prints or records a database address (run.json, reports, error messages, the
CLI) goes through ``redact_dsn``. Both URL DSNs (``postgresql://user:pw@host/db``) and libpq
keyword DSNs (``host=... password=pw``) are handled.

``redact(text)`` is the catch-all applied where chaos writes files a person reads or shares
(run.json, the journal, results.json, report.md): besides DSNs it masks the password of any
``scheme://user:password@host`` URL, ``password=``/``secret=``/``token=``/``api_key=`` settings,
PEM private-key blocks and well-known API-token shapes. ``redact_obj`` applies it to every string
of a JSON-like value (keys whose name says "password", "secret", "token" or "key" are masked whole).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

_KW_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"\b(postgres(?:ql)?://[^\s'\"]+)")


def redact_dsn(dsn: str | None) -> str | None:
    """``dsn`` with any password replaced by ``***`` (None stays None)."""
    if dsn is None:
        return None
    if "://" in dsn:
        try:
            parts = urlsplit(dsn)
        except ValueError:
            return "***"
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, hostport = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hostport}"
        query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _KW_PASSWORD.sub(r"\1***", dsn)


def redact_text(text: str) -> str:
    """Redact every DSN that appears inside free text (an error message, a log line)."""
    text = _URL_IN_TEXT.sub(lambda m: redact_dsn(m.group(1)) or "", text)
    return _KW_PASSWORD.sub(r"\1***", text)


def redact_config(obj):
    """A copy of a JSON-like config with every ``dsn`` value (at any depth) redacted."""
    if isinstance(obj, dict):
        return {k: (redact_dsn(v) if k == "dsn" and isinstance(v, str) else redact_config(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_config(v) for v in obj]
    return obj


_URL_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:)([^\s@/'\"]+)(@)")
# a setting's name that says it holds a secret: PGPASSWORD, db_pass, pw, MY_API_TOKEN, auth, ...
_SECRET_NAME = (
    r"(?:[A-Za-z0-9_-]*(?:password|passwd|pwd|secret|token(?!s)|api[_-]?key|access[_-]?key|private[_-]?key|credential)[A-Za-z0-9_-]*"
    r"|(?:[A-Za-z0-9]+[_-])*(?:pass|pw|auth))"
)
# name, optional closing quote, = or :, then the value: a quoted string whole ('two words'), or a bare run
_KV_SECRET = re.compile(r"(?i)(\b" + _SECRET_NAME + r"\b[\"']?\s*[=:]\s*)(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[^\s'\",;&}]+)")
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(-----END \1PRIVATE KEY-----|\Z)", re.DOTALL)
_TOKENS = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|gh[ousr]_[A-Za-z0-9]{20,}|xox[baprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b"
)
_SECRET_KEY_NAME = re.compile(r"(?i)^" + _SECRET_NAME + r"$")


def _plain(secret: str) -> str:
    return "***"


def stable_mask(salt: str) -> Callable[[str], str]:
    """A mask that keeps distinct secrets distinct: ``***`` and 12 hex digits of a salted SHA-256.

    For the effect ledger, where a value is also an identity (two racers' answers must stay two
    effects, one answer repeated must stay one). It hides the secret from a reader; like any hash
    of a short password, it does not stop someone who guesses the password from confirming it."""

    def mask(secret: str) -> str:
        return "***" + hashlib.sha256(f"{salt}\0{secret}".encode()).hexdigest()[:12]

    return mask


def redact(text: str, mask: Callable[[str], str] = _plain) -> str:
    """``text`` with passwords in URLs/DSNs, secret settings, private keys and API tokens masked
    (each secret replaced by ``mask(secret)``: ``***`` unless told otherwise)."""
    if not text:
        return text

    def kv(m: re.Match[str]) -> str:
        value = m.group(2)
        quote = value[0] if value[:1] in ("'", '"') else ""
        inner = value[1:-1] if quote and len(value) > 1 else value
        return f"{m.group(1)}{quote}{mask(inner)}{quote}"

    text = _PEM.sub(lambda m: f"-----BEGIN {m.group(1)}PRIVATE KEY----- {mask(m.group(0))} -----END {m.group(1)}PRIVATE KEY-----", text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{mask(m.group(2))}{m.group(3)}", text)
    text = _KV_SECRET.sub(kv, text)
    text = _TOKENS.sub(lambda m: mask(m.group(0)), text)
    return text


def redact_obj(obj):
    """A copy of a JSON-like value with ``redact`` applied to every string (and secret-named keys masked)."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = redact(k) if isinstance(k, str) else k  # a secret can be a key too (a DSN, a token)
            if isinstance(k, str) and _SECRET_KEY_NAME.search(k) and isinstance(v, (str, int, float)) and v not in ("", None):
                out[key] = "***"
            else:
                out[key] = redact_obj(v)
        return out
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v) for v in obj]
    return obj

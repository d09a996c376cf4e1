"""Keep secrets out of reports and logs: DSNs are recorded with their password replaced by ``***``.

Every place that prints or records a database address (run.json, reports, error messages, the
CLI) goes through ``redact_dsn``. Both URL DSNs (``postgresql://user:pw@host/db``) and libpq
keyword DSNs (``host=... password=pw``) are handled.
"""

from __future__ import annotations

import re
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

"""Keep secrets out of everything chaos writes: one masker, applied where data is serialised.

Every place that prints or records a database address (run.json, reports, error messages, the
CLI) goes through ``redact_dsn``. Both URL DSNs (``postgresql://user:pw@host/db``) and libpq
keyword DSNs (``host=... password=pw``) are handled.

``redact(text)`` is the catch-all, applied at the few places where chaos serialises what it writes
(``chaos.running.runfolder`` for run.json, the journal's append, results.json and the reports, kept
work files, the terminal, the effect ledger). It masks:

* the password of any ``scheme://user:password@host`` URL (a ``/`` or ``:`` in the password too),
  the same URL percent-encoded (``postgresql%3A%2F%2Fu%3Apw%40h``), and ``.pgpass`` lines;
* settings whose name says they hold a secret, as ``name=value``, ``name: value``, ``"name": "v"``
  or ``--name value`` (``PGPASSWORD``, ``pw``, ``db_pass``, ``passphrase``, ``*_TOKEN``,
  ``*_SECRET``, ``*_KEY``, ``*cookie*``, ``*session*``, ``api_key``, ``credential``, ...), a quoted
  value whole (``password='two words'``);
* HTTP credentials (``Authorization: Basic ...``, ``Bearer ...``, ``Cookie:``, ``X-Api-Key:``);
* PEM private-key blocks, JWTs and the well-known token shapes (AWS ``AKIA``/``ASIA``, Slack
  ``xox*-``/``xapp-``, Stripe ``sk_``/``rk_``/``pk_live``, GitHub ``gh?_``/``github_pat_``, GitLab
  ``glpat-``, Hugging Face ``hf_``, Google ``AIza``/``ya29.``, ``npm_``, OpenAI/Anthropic ``sk-``,
  SendGrid ``SG.``).

Masking by value, beside the patterns: what the user declares secret is masked wherever it
appears, whatever its form. Declared are the values of the environment variables named in
``CHAOS_SECRETS`` (comma-separated names), of environment variables whose name says they hold a
secret (a value of 8 characters or more, not a path), the passwords of DSNs held in environment
variables (``CHAOS_PG_DSN``, ``DATABASE_URL``, ...), and the values of secret-named workload
parameters (``declare_params``: the orchestrator and each racer declare their scenario's). A
value shorter than 8 characters is never masked by value (it would mask ordinary words).

Everything else is left exactly as it was: ids, hashes, barrier names and ordinary words are what
a reader needs. ``redact_obj`` applies ``redact`` to every string of a JSON-like value (keys
included), and masks whole the scalar value of a key whose name says it is secret. The corpus of
forms this promises to mask lives in the tests (``tests/kits/secret_forms.py``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Callable
from urllib.parse import quote, unquote, urlsplit, urlunsplit

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


# scheme://user:password@host: the password runs to the "@" (it may hold "/" or ":"), unless what
# follows the colon is a port ("http://host:8080/a@b" has no password)
_URL_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"<>`]*:)([^\s@'\"<>`]+)(@)")
_PORT = re.compile(r"\d{1,5}(?:[/?#].*)?")
# the same URL percent-encoded as a whole (a DSN passed as a query parameter)
_URL_ENCODED = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*%3A%2F%2F[A-Za-z0-9%._~+!*()-]+")
# a .pgpass line: hostname:port:database:username:password
_PGPASS = re.compile(r"(?<![\w./@*-])([A-Za-z0-9_.*-]+:(?:\d{1,5}|\*):[^\s:'\"]+:[^\s:'\"]+:)([^\s'\"<>`]+)")
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY((?: BLOCK)?)-----.*?(-----END \1PRIVATE KEY\2-----|\Z)", re.DOTALL)
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}"  # AWS key ids
    r"|xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"  # GitHub
    r"|gl(?:pat|ptt|dt|rt|oas|cbt|imt|soat|ffct|ft)-[A-Za-z0-9_-]{16,}"  # GitLab
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|AIza[0-9A-Za-z_-]{30,}|ya29\.[0-9A-Za-z_-]{20,}"  # Google API key, OAuth access token
    r"|npm_[A-Za-z0-9]{30,}"  # npm
    r"|sk-[A-Za-z0-9_-]{16,}"  # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|pypi-[A-Za-z0-9_-]{16,}"  # PyPI upload token
    r"|dckr_pat_[A-Za-z0-9_-]{16,}"  # Docker Hub personal access token
    r"|whsec_[A-Za-z0-9+/=_-]{16,}"  # Stripe webhook signing secret
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JWT (header.payload.signature)
    r")"
)
# URL parts that are credentials by where they sit: a signed URL's signature (Azure SAS ``sig=``,
# S3 ``X-Amz-Signature=``, GCS ``X-Goog-Signature=``) and a token in a query; webhook and bot URLs
# whose path is the secret (Slack, Discord, Telegram)
_QUERY_SECRET = re.compile(
    r"(?i)([?&](?:sig|signature|x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature|x-goog-credential"
    r"|access_token|refresh_token|id_token|token|api_key|apikey|key|secret|client_secret|password|pwd|auth|code)=)([^&#\s'\"<>`]+)"
)
_URL_PATH_SECRET = re.compile(
    r"(?i)(hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9]+/)*?)([A-Za-z0-9]{16,})"
    r"|(discord(?:app)?\.com/api/webhooks/\d+/)([A-Za-z0-9_-]{16,})"
    r"|(api\.telegram\.org/(?:file/)?bot\d+:)([A-Za-z0-9_-]{16,})"
)
# a MySQL client's password glued to its flag: ``mysql -uroot -pSECRET db``
_MYSQL_P = re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n]*?\s-p)([^\s'\"]+)")
# a YAML block scalar under a secret-named key: ``password: |`` and its more-indented lines
_BLOCK_KEY = re.compile(r"^([ \t]*)(?:- )?[\"']?([A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*$")

# HTTP credentials: "Authorization: <scheme> <credentials>", a bare "Bearer <token>", "Basic <base64>"
_AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token|digest|negotiate)\s+)?)([^\s'\",;]+)"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})")
_BASIC = re.compile(r"(\bBasic\s+)(?=[A-Za-z0-9+/]*[0-9=])([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")

# a name (of a setting, a header, a flag, a JSON key) followed by = or :, or a flag by a space
_NAME_THEN_VALUE = re.compile(
    r"(?<![A-Za-z0-9_.-])(--?)?([A-Za-z_][A-Za-z0-9_.-]*)"
    r"(?:([\"']?\s*[=:]\s*)|(?(1)(?<=[A-Za-z0-9])\s+|(?!)))"
    r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[^\s'\",;&}<>`]+)"
)
# a name says it holds a secret when its last word does: PGPASSWORD, db_password, MY_API_TOKEN,
# clientSecret, session_cookie, AWS_SECRET_ACCESS_KEY; "secret_workloads" or "password_file" do not
_SECRET_END_LONG = re.compile(
    r"(?i)(?:(?:password|passwd|passphrase|secret|credential)s?|token|cookie|session|sessionid|apikey|private[_.-]?key)$"
)
# ... or a short word after a separator or a camelCase boundary: db_pass, pw, auth, STRIPE_KEY, apiKey
_SECRET_END_SHORT = re.compile(r"(?:^|[_.-]|(?<=[a-z0-9])(?=[A-Z]))(?i:pass|pw|pwd|auth|key)$")
# names that end like a secret but hold an id, a count or a list of them, never a secret
_NOT_SECRET = re.compile(
    r"(?i)(?:^|[_.-])(?:effect|idempotency|sort|primary|foreign|partition|cache|dedupe?|row|group|hash|range|lookup"
    r"|map|dict|unique|public|host|thread|trial|cell|run|node|task|state|kill|order|index)[_.-]?key$"
    r"|^(?:key|tokens|sessions|cookies|max[_.-]?tokens?)$"
)


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a setting, header, flag or JSON key named ``name`` holds a secret by its name alone
    (an encoding suffix is read past: ``SECRET_KEY_BASE``, ``ENCRYPTION_KEY_B64``, ``API_TOKEN_HEX``)."""
    name = _ENCODING_SUFFIX.sub("", name.strip("-_. "))
    if not name or _NOT_SECRET.search(name):
        return False
    return bool(_SECRET_END_LONG.search(name) or _SECRET_END_SHORT.search(name))


_ENCODING_SUFFIX = re.compile(r"(?i)(?<=[A-Za-z0-9])[_.-](?:base|b64|base64|b32|hex|raw|bytes|pem|der|value|data)$")


def _block_scalars(text: str, mask: Callable[[str], str]) -> str:
    """The body of every YAML block scalar (``password: |`` then its more-indented lines) under a
    secret-named key, masked line by line: YAML's structure read, not guessed from one line."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _BLOCK_KEY.match(lines[i])
        i += 1
        if m is None or not is_secret_name(m.group(2)):
            continue
        indent = len(m.group(1))
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body = lines[i].strip()
            if body and not _is_mask(body):
                lines[i] = lines[i][: len(lines[i]) - len(lines[i].lstrip())] + mask(body)
            i += 1
    return "\n".join(lines)


_JSON_START = re.compile(r"[{\[]\s*[\"{\[]")


def _json_inside(text: str, mask: Callable[[str], str]) -> str | None:
    """``text`` with every JSON object or array inside it (a setting holding JSON, an error or an
    effect name quoting a request body, JSON inside a JSON string) masked as the data it is: parsed,
    masked by key (``redact_obj``), dumped again where something changed. None: nothing changed."""
    import json

    decoder = json.JSONDecoder()
    out: list[str] = []
    last = pos = 0
    tries = 0
    changed = False
    while tries < 200 and (m := _JSON_START.search(text, pos)) is not None:
        tries += 1
        try:
            obj, end = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            pos = m.start() + 1
            continue
        clean = redact_obj(obj) if mask is _plain else _obj_with(obj, mask)
        if clean != obj:
            out.append(text[last : m.start()] + json.dumps(clean, ensure_ascii=False))
            last, changed = end, True
        pos = end
    if not changed:
        return None
    out.append(text[last:])
    return "".join(out)


def _obj_with(obj, mask: Callable[[str], str]):
    if isinstance(obj, str):
        return redact(obj, mask)
    if isinstance(obj, dict):
        return {
            (redact(k, mask) if isinstance(k, str) else k): (
                mask(v) if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) and v else _obj_with(v, mask)
            )
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_obj_with(v, mask) for v in obj]
    return obj


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


def _is_mask(value: str) -> bool:
    """A value that is already a mask (``***`` or a stable mask): masking it again changes nothing."""
    return value.startswith("***")


# a barrier's phase after its boundary's name (``create_session:after#1``, a kill point): no secret;
# also followed by the colon a report puts after a point (``create_session:before#1: vacuous``)
_PHASE = re.compile(r"(?:before|after)(?:#\d+)?:?")

# a count, or counts per trial (``reset_password=1,2`` in a report): no secret has three digits or fewer
_COUNTS = re.compile(r"\d{1,3}(?:,\d{1,3})*")


def _settings(text: str, mask: Callable[[str], str]) -> str:
    """Mask the value of every setting, header or flag whose name says it is secret. A value may
    itself hold another setting (``Cookie: sessionid=...``, ``key = v:key = w``): scanning goes on
    inside it, and overlapping values are masked as one."""
    spans: list[list[int]] = []  # [start, end) of each value to mask, in order, merged
    pos = 0
    while True:
        m = _NAME_THEN_VALUE.search(text, pos)
        if m is None:
            break
        dashes, name, sep, value = m.groups()
        pos = m.end(2)  # the next name may start inside this value
        if (
            not is_secret_name(name)
            or (sep is None and not dashes)
            or _is_mask(value.strip("'\""))
            or _COUNTS.fullmatch(value)
            or _PHASE.fullmatch(value)
        ):
            continue
        quoted = value[:1] in ("'", '"') and len(value) > 1
        start, end = (m.start(4) + 1, m.end(4) - 1) if quoted else (m.start(4), m.end(4))
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start] + mask(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def _userinfo(text: str, mask: Callable[[str], str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if _PORT.fullmatch(m.group(2)) or _is_mask(m.group(2)):
            return m.group(0)
        return f"{m.group(1)}{mask(m.group(2))}{m.group(3)}"

    return _URL_USERINFO.sub(sub, text)


# cheap tests that let most strings (ids, numbers, barrier names) skip the rules that cannot apply
_SECRET_HINT = re.compile(r"(?i)pass|pw|pwd|auth|key|secret|token|credential|cookie|session")
_AUTH_HINT = re.compile(r"(?i)auth|bearer|basic")


def redact(text: str, mask: Callable[[str], str] = _plain) -> str:
    """``text`` with passwords in URLs/DSNs, secret settings, HTTP credentials, private keys and API
    tokens masked (each secret replaced by ``mask(secret)``: ``***`` unless told otherwise)."""
    if not text or not isinstance(text, str):
        return text
    if mask is _plain and len(text) <= 1000:
        return _redact_plain(text)
    return _redact(text, mask)


@functools.lru_cache(maxsize=4096)
def _redact_plain(text: str) -> str:
    """``redact`` with the plain mask, remembered: a run's records repeat the same short strings
    (node and barrier names, reasons) in every trial (at most 4096 of 1000 characters: 4 MB)."""
    return _redact(text, _plain)


# ------------------------------------------------------------------------ masking by value

DECLARE_ENV = "CHAOS_SECRETS"  # names of environment variables whose values are secret, comma-separated
MIN_VALUE = 8  # a shorter value would mask ordinary words wherever they appear
_declared: set[str] = set()
_ordered: list[str] = []  # longest first: a secret that holds another is masked whole
_env_read = False


def declare_secret(value: object) -> None:
    """Mask ``value`` (a string of at least ``MIN_VALUE`` characters) wherever chaos writes it."""
    if not isinstance(value, str) or len(value) < MIN_VALUE or value.startswith("***") or value in _declared:
        return
    _declared.add(value)
    _ordered[:] = sorted(_declared, key=len, reverse=True)
    _redact_plain.cache_clear()


def declare_params(params: object) -> None:
    """Declare the values of secret-named keys anywhere in ``params`` (a scenario's workload_params)."""
    if isinstance(params, dict):
        for k, v in params.items():
            if isinstance(k, str) and is_secret_name(k) and isinstance(v, (str, int)) and not isinstance(v, bool):
                declare_secret(str(v))
            else:
                declare_params(v)
    elif isinstance(params, (list, tuple)):
        for v in params:
            declare_params(v)


def _dsn_password(value: str) -> str | None:
    if "://" in value:
        with contextlib.suppress(ValueError):
            return urlsplit(value).password and unquote(urlsplit(value).password or "")
    m = re.search(r"(?i)\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", value)
    return m.group(1).strip("'") if m else None


def _read_env() -> None:
    """Declare what the environment holds secret (once per process: racers inherit the orchestrator's)."""
    global _env_read
    if _env_read:
        return
    _env_read = True
    import os

    named = {n.strip() for n in os.environ.get(DECLARE_ENV, "").split(",") if n.strip()}
    for name, value in os.environ.items():
        if name in named:
            declare_secret(value)
        elif is_secret_name(name) and "/" not in value:
            declare_secret(value)
        password = _dsn_password(value) if ("://" in value or "password" in value.lower()) else None
        if password:
            declare_secret(password)


def _by_value(text: str, mask: Callable[[str], str]) -> str:
    _read_env()
    for value in _ordered:
        if value in text:
            text = text.replace(value, mask(value))
    return text


def _redact(text: str, mask: Callable[[str], str]) -> str:
    def encoded(m: re.Match[str]) -> str:
        plain = unquote(m.group(0))
        clean = _redact(plain, mask)
        return m.group(0) if clean == plain else quote(clean, safe="*")  # the mask reads as ***

    text = _by_value(text, mask)

    if ("{" in text or "[" in text) and '"' in text:
        inside = _json_inside(text, mask)
        if inside is not None:
            text = inside
    if "PRIVATE KEY" in text:
        text = _PEM.sub(
            lambda m: (
                f"-----BEGIN {m.group(1)}PRIVATE KEY{m.group(2) or ''}----- {mask(m.group(0))} -----END {m.group(1)}PRIVATE KEY{m.group(2) or ''}-----"
            ),
            text,
        )
    if "%3" in text.upper():
        text = _URL_ENCODED.sub(encoded, text)
    if "://" in text:
        text = _userinfo(text, mask)
        text = _QUERY_SECRET.sub(lambda m: m.group(0) if _is_mask(m.group(2)) else f"{m.group(1)}{mask(m.group(2))}", text)
        text = _URL_PATH_SECRET.sub(
            lambda m: "".join(g if i % 2 == 0 else mask(g) for i, g in enumerate(m.groups()) if g is not None), text
        )
    if " -p" in text:
        text = _MYSQL_P.sub(lambda m: m.group(0) if _is_mask(m.group(2)) else f"{m.group(1)}{mask(m.group(2))}", text)
    if "\n" in text and ("|" in text or ">" in text):
        text = _block_scalars(text, mask)
    if text.count(":") >= 4:
        text = _PGPASS.sub(lambda m: m.group(0) if _is_mask(m.group(2)) else f"{m.group(1)}{mask(m.group(2))}", text)
    if _AUTH_HINT.search(text):
        text = _AUTH_HEADER.sub(lambda m: m.group(0) if _is_mask(m.group(2)) else f"{m.group(1)}{mask(m.group(2))}", text)
        text = _BEARER.sub(lambda m: m.group(0) if _is_mask(m.group(2)) else f"{m.group(1)}{mask(m.group(2))}", text)
        text = _BASIC.sub(lambda m: f"{m.group(1)}{mask(m.group(2))}", text)
    if _SECRET_HINT.search(text):
        text = _settings(text, mask)
    return _TOKENS.sub(lambda m: mask(m.group(0)), text)


def redact_obj(obj, *, keep_numbers: bool = False):
    """A copy of a JSON-like value with ``redact`` applied to every string (and secret-named keys masked).

    ``keep_numbers``: a number under a secret-named key stays a number. For chaos's own typed
    records (results, trial records), whose numbers are its counts, keyed by the user's effect
    names: an effect named ``reset_password`` fired twice is a count, and "***" in its place would
    make the record invalid. A user's settings (run.json's scenario, racer specs) mask them too
    (``password: 123456``)."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = redact(k) if isinstance(k, str) else k  # a secret can be a key too (a DSN, a token)
            scalar = isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool) and not keep_numbers)
            if isinstance(k, str) and is_secret_name(k) and scalar and v != "":
                out[key] = "***"
            else:
                out[key] = redact_obj(v, keep_numbers=keep_numbers)
        return out
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v, keep_numbers=keep_numbers) for v in obj]
    return obj


def redact_json_text(text: str, *, keep_numbers: bool = False) -> str:
    """A JSON document (or JSON Lines) with every secret masked, still valid JSON: parsed, masked
    as an object (``redact_obj``), dumped again only if something changed. Text that is not JSON
    is masked as text."""
    import json

    try:
        obj = json.loads(text)
    except ValueError:
        lines = text.split("\n")
        if len(lines) > 1 and all(_json_or_blank(line) for line in lines):
            return "\n".join(redact_json_text(line, keep_numbers=keep_numbers) if line.strip() else line for line in lines)
        return redact(text)
    clean = redact_obj(obj, keep_numbers=keep_numbers)
    if clean == obj:
        return text
    indent = 2 if "\n" in text.strip() else None
    return json.dumps(clean, indent=indent, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")


def _json_or_blank(line: str) -> bool:
    import json

    if not line.strip():
        return True
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def redact_file_text(name: str, text: str, *, keep_numbers: bool = False) -> str:
    """The masked text of a file chaos writes, by its kind: JSON stays valid JSON (``keep_numbers``
    as ``redact_obj``), anything else is masked as text. The one masker every file of a run folder
    goes through."""
    if name.endswith((".json", ".jsonl")):
        return redact_json_text(text, keep_numbers=keep_numbers)
    return redact(text)


def masked_tail(data: bytes, n: int) -> str:
    """The last ``n`` bytes of a log, secrets masked, for a reason or an error message. A window
    that starts inside a line drops that partial line first: a secret cut in half is no longer
    recognisable, and its second half would go through."""
    if len(data) > n:
        data = data[-n:]
        newline = data.find(b"\n")
        if newline >= 0:
            data = data[newline + 1 :]
    return redact(data.decode(errors="replace"))

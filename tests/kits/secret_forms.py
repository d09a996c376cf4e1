"""The corpus of secret forms chaos must mask, as users leak them: one record per form.

Why a corpus: masking that is tested on a handful of hand-picked strings passes while the forms
people actually paste (a ``Bearer`` header, a Stripe key, a ``.pgpass`` line, a URL-encoded DSN)
go through. Every test of masking reads this list, so a form added here is checked everywhere: by
the unit test of the masker (``tests/test_redact.py``) and by the story of a real run whose params,
``about``, effect names, racer errors and log lines carry every form (``tests/test_masking.py``).

``text`` is the form as it appears in a log line, an error or a setting; ``secret`` is the part
that must never appear verbatim in anything chaos writes; ``key`` (optional) is a setting name
whose value is secret by its name alone (``{"STRIPE_KEY": "..."}``), for JSON-like inputs.

Every value is fake, made for this file (none is a real credential): long enough and distinctive
enough that finding it in a file can only mean a leak.

``READABLE`` is the other half of the promise: ordinary text that must come through unchanged, so
a masker that masks everything fails the same tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class SecretForm:
    name: str
    text: str  # how the form appears in free text
    secret: str  # what must never appear verbatim
    key: str | None = None  # a setting name that makes its value secret by itself


_PEM_BODY = "MIIEowIBAAKCAQEAzF4k3xPemBodyOfAFakeKeyForChaosTests0001\nq9Z7FakePemSecondLineForChaosTests0002"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJjaGFvcy10ZXN0LXVzZXIiLCJpYXQiOjE3MDAwMDAwMDB9"
    ".Zm9yZ2VkU2lnbmF0dXJlRm9yQ2hhb3NUZXN0czAwMQ"
)
_DSN_PW = "Pg-url-S3cret-0017"
_NESTED_JSON = json.dumps({"config": json.dumps({"db": {"password": "ChaosFakeNestedJson0058"}})})
_ENC_DSN = quote(f"postgresql://app:{_DSN_PW}x@db.internal:5432/app", safe="")

FORMS: list[SecretForm] = [
    # cloud and SaaS tokens, recognised by their prefix alone
    SecretForm("aws_access_key_id", "loaded AKIAQ7CHAOSFAKE00001 from env", "AKIAQ7CHAOSFAKE00001"),
    SecretForm("aws_session_key_id", "temporary ASIAQ7CHAOSFAKE00002 issued", "ASIAQ7CHAOSFAKE00002"),
    SecretForm(
        "aws_secret_access_key",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIchaosFAKEbPxRfiCYEXAMPLEKEY1",
        "wJalrXUtnFEMIchaosFAKEbPxRfiCYEXAMPLEKEY1",
    ),
    SecretForm(
        "aws_secret_in_config", "aws_secret_access_key = Zq8chaosFAKEsecretAccessKeyValue0000003", "Zq8chaosFAKEsecretAccessKeyValue0000003"
    ),
    SecretForm("slack_bot", "posting with xoxb-123456789012-chaosFakeBotToken04", "xoxb-123456789012-chaosFakeBotToken04"),
    SecretForm("slack_user", "user token xoxp-123456789012-chaosFakeUserToken05", "xoxp-123456789012-chaosFakeUserToken05"),
    SecretForm("slack_app", "app token xapp-1-A0CHAOS-123456-chaosFakeAppToken06", "xapp-1-A0CHAOS-123456-chaosFakeAppToken06"),
    SecretForm("stripe_sk_live", "charging with sk_live_51ChaosFakeStripeLive000007", "sk_live_51ChaosFakeStripeLive000007"),
    SecretForm("stripe_sk_test", "test mode sk_test_51ChaosFakeStripeTest000008", "sk_test_51ChaosFakeStripeTest000008"),
    SecretForm("stripe_rk_live", "restricted rk_live_51ChaosFakeStripeRestricted9", "rk_live_51ChaosFakeStripeRestricted9"),
    SecretForm("stripe_pk_live", "publishable pk_live_51ChaosFakeStripePublish10", "pk_live_51ChaosFakeStripePublish10"),
    SecretForm("github_ghp", "git push with ghp_ChaosFakeGithubClassic0000000000011", "ghp_ChaosFakeGithubClassic0000000000011"),
    SecretForm("github_gho", "oauth gho_ChaosFakeGithubOauth00000000000012", "gho_ChaosFakeGithubOauth00000000000012"),
    SecretForm("github_ghs", "app install ghs_ChaosFakeGithubServer0000000000013", "ghs_ChaosFakeGithubServer0000000000013"),
    SecretForm("github_ghu", "user-to-server ghu_ChaosFakeGithubUser00000000000014", "ghu_ChaosFakeGithubUser00000000000014"),
    SecretForm(
        "github_pat",
        "fine-grained github_pat_11CHAOSFAKE0_ChaosFakeFineGrainedPat000000015",
        "github_pat_11CHAOSFAKE0_ChaosFakeFineGrainedPat000000015",
    ),
    SecretForm("gitlab_pat", "clone with glpat-ChaosFakeGitlab0000016", "glpat-ChaosFakeGitlab0000016"),
    SecretForm("huggingface", "hub login hf_ChaosFakeHuggingFaceToken0000017", "hf_ChaosFakeHuggingFaceToken0000017"),
    SecretForm("google_api", "maps key AIzaSyChaosFakeGoogleApiKey00000000018", "AIzaSyChaosFakeGoogleApiKey00000000018"),
    SecretForm("npm", "publish with npm_ChaosFakeNpmToken000000000000000019", "npm_ChaosFakeNpmToken000000000000000019"),
    SecretForm("openai", "model call sk-ChaosFakeOpenAiLegacyKey0000000020", "sk-ChaosFakeOpenAiLegacyKey0000000020"),
    SecretForm("openai_project", "model call sk-proj-ChaosFakeOpenAiProject_0000021", "sk-proj-ChaosFakeOpenAiProject_0000021"),
    SecretForm("anthropic", "model call sk-ant-api03-ChaosFakeAnthropic-000022", "sk-ant-api03-ChaosFakeAnthropic-000022"),
    SecretForm(
        "sendgrid", "mail via SG.ChaosFakeSendgrid23.ChaosFakeSendgridSecret0023", "SG.ChaosFakeSendgrid23.ChaosFakeSendgridSecret0023"
    ),
    SecretForm("jwt", f"id token {_JWT} expired", _JWT),
    SecretForm(
        "pem_rsa",
        f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAzF4k3xPemBodyOfAFakeKeyForChaosTests0001",
    ),
    SecretForm(
        "pem_openssh",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaChaosFakeOpensshKeyBody0000026\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaChaosFakeOpensshKeyBody0000026",
    ),
    # HTTP credentials
    SecretForm("bearer", "Authorization: Bearer ChaosFakeBearerOpaque.0000027", "ChaosFakeBearerOpaque.0000027"),
    SecretForm("basic", "Authorization: Basic Y2hhb3M6ZmFrZS1iYXNpYy0wMDAwMjg=", "Y2hhb3M6ZmFrZS1iYXNpYy0wMDAwMjg="),
    SecretForm("bearer_lowercase", "curl -H 'authorization: bearer chaosfakebearerlower0029'", "chaosfakebearerlower0029"),
    SecretForm("api_key_header", "X-Api-Key: ChaosFakeHeaderApiKey0030", "ChaosFakeHeaderApiKey0030"),
    SecretForm("cookie_header", "Cookie: sessionid=ChaosFakeSessionCookie0031; theme=dark", "ChaosFakeSessionCookie0031"),
    SecretForm("set_cookie", "Set-Cookie: auth=ChaosFakeSetCookie0032; HttpOnly", "ChaosFakeSetCookie0032"),
    # settings that say they hold a secret
    SecretForm("password_kv", "login failed: password=ChaosFakePassword0033 rejected", "ChaosFakePassword0033"),
    SecretForm("passphrase_kv", "unlock passphrase=ChaosFakePassphrase0034", "ChaosFakePassphrase0034"),
    SecretForm("secret_kv", "config secret=ChaosFakeSecretValue0035", "ChaosFakeSecretValue0035"),
    SecretForm("token_kv", "retry with token=ChaosFakeTokenValue0036", "ChaosFakeTokenValue0036"),
    SecretForm("password_quoted_words", "password='chaos fake two words 37'", "chaos fake two words 37"),
    SecretForm("pgpassword_env", "PGPASSWORD=ChaosFakePgpassword0038 psql -h db", "ChaosFakePgpassword0038"),
    SecretForm("password_flag", "mysql --password ChaosFakeFlagPassword0039 -h db", "ChaosFakeFlagPassword0039"),
    SecretForm("password_flag_eq", "pg_dump --password=ChaosFakeFlagPassword0040", "ChaosFakeFlagPassword0040"),
    SecretForm("json_password", '{"password": "ChaosFakeJsonPassword0041"}', "ChaosFakeJsonPassword0041"),
    SecretForm("yaml_api_key", "api_key: ChaosFakeYamlApiKey0042", "ChaosFakeYamlApiKey0042"),
    # database addresses
    SecretForm("dsn_plain", "connect postgresql://user:ChaosFakeDsnPassword0043@db:5432/app", "ChaosFakeDsnPassword0043"),
    SecretForm("dsn_mysql", "mysql://root:ChaosFakeMysqlPassword0044@10.0.0.5/shop", "ChaosFakeMysqlPassword0044"),
    SecretForm("dsn_redis_no_user", "cache redis://:ChaosFakeRedisPassword0045@cache:6379/0", "ChaosFakeRedisPassword0045"),
    SecretForm("dsn_slash_in_password", "postgresql://app:ChaosFake/Slash0046@db/app", "ChaosFake/Slash0046"),
    SecretForm("dsn_url_encoded", f"dsn={_ENC_DSN}", _DSN_PW),
    SecretForm("dsn_keywords", "host=db user=app password=ChaosFakeKwPassword0048 dbname=app", "ChaosFakeKwPassword0048"),
    SecretForm("pgpass_line", "db.internal:5432:app:appuser:ChaosFakePgpassLine0049", "ChaosFakePgpassLine0049"),
    # settings whose name alone makes the value secret (env assignments and JSON keys)
    SecretForm("stripe_key_name", "STRIPE_KEY=ChaosFakeStripeKeyName0050", "ChaosFakeStripeKeyName0050", key="STRIPE_KEY"),
    SecretForm(
        "session_cookie_name", "session_cookie=ChaosFakeSessionCookieName0051", "ChaosFakeSessionCookieName0051", key="session_cookie"
    ),
    SecretForm("token_name", "GITHUB_TOKEN=ChaosFakeTokenName0052", "ChaosFakeTokenName0052", key="GITHUB_TOKEN"),
    SecretForm("secret_name", "CLIENT_SECRET=ChaosFakeClientSecret0053", "ChaosFakeClientSecret0053", key="CLIENT_SECRET"),
    SecretForm("session_name", "flask_session=ChaosFakeFlaskSession0054", "ChaosFakeFlaskSession0054", key="flask_session"),
    SecretForm("cookie_name", "auth_cookie: ChaosFakeAuthCookie0055", "ChaosFakeAuthCookie0055", key="auth_cookie"),
    SecretForm("private_key_name", "SIGNING_PRIVATE_KEY=ChaosFakeSigningKey0056", "ChaosFakeSigningKey0056", key="SIGNING_PRIVATE_KEY"),
    SecretForm("db_pass_name", "db_pass=ChaosFakeDbPass0057", "ChaosFakeDbPass0057", key="db_pass"),
    # issue 40, point 4: forms that went through end to end (structured data is masked by parsing)
    SecretForm("json_in_json_string", _NESTED_JSON, "ChaosFakeNestedJson0058"),
    SecretForm("dsn_raw_at_in_password", "postgresql://app:Chaos@Fake@Raw0059@db:5432/app", "Chaos@Fake@Raw0059"),
    SecretForm(
        "azure_sas", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=ChaosFakeAzureSig0060%3D", "ChaosFakeAzureSig0060"
    ),
    SecretForm(
        "s3_presigned",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=chaosfakeamzsignature0061abcdef",
        "chaosfakeamzsignature0061abcdef",
    ),
    SecretForm("slack_webhook", "https://hooks.slack.com/services/T0CHAOS01/B0CHAOS02/ChaosFakeSlackHook0062", "ChaosFakeSlackHook0062"),
    SecretForm(
        "discord_webhook",
        "https://discord.com/api/webhooks/123456789012345678/ChaosFakeDiscordHook0063-abc",
        "ChaosFakeDiscordHook0063-abc",
    ),
    SecretForm(
        "telegram_bot", "https://api.telegram.org/bot123456789:ChaosFakeTelegramBot0064xyz/sendMessage", "ChaosFakeTelegramBot0064xyz"
    ),
    SecretForm("pypi_token", "twine upload -p pypi-AgEIcHlwaS5vcmcChaosFakePypiToken0065", "pypi-AgEIcHlwaS5vcmcChaosFakePypiToken0065"),
    SecretForm("docker_pat", "docker login -p dckr_pat_ChaosFakeDockerPat0066", "dckr_pat_ChaosFakeDockerPat0066"),
    SecretForm("stripe_webhook_secret", "verify with whsec_ChaosFakeStripeWebhook0067", "whsec_ChaosFakeStripeWebhook0067"),
    SecretForm(
        "pgp_private_block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBChaosFakePgpBody0068\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBChaosFakePgpBody0068",
    ),
    SecretForm("yaml_block_scalar", "db:\n  password: |\n    ChaosFakeBlockScalar0069\n  host: db\n", "ChaosFakeBlockScalar0069"),
    SecretForm("mysql_p_flag", "mysql -uroot -pChaosFakeMysqlFlag0070 shop", "ChaosFakeMysqlFlag0070"),
    SecretForm("secret_key_base", "SECRET_KEY_BASE=ChaosFakeKeyBase0071", "ChaosFakeKeyBase0071"),
    SecretForm("encryption_key_b64", "ENCRYPTION_KEY_B64=ChaosFakeEncKeyB64x0072", "ChaosFakeEncKeyB64x0072"),
    SecretForm("pgpass_in_effect_key", "effect_key=dump:db.internal:5432:app:appuser:ChaosFakePgpassInKey0073", "ChaosFakePgpassInKey0073"),
]

# ordinary text that must reach the files unchanged: a masker that masks everything fails
READABLE = [
    "put_writes(node=b,channels=log+branch:to:c):before#1",
    "effect 'b' fired 2x (trial c000-p011-r000)",
    "gate:True",
    "keys=3 effect_key=gate:True",
    "postgresql://chaos@db/app",
    "https://example.org/a:b",
    "http://localhost:8080/health",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "the quick brown fox jumps over the lazy dog",
    "session 3 of 5 finished; tokens used: 120",
    "idempotency_key=order-42 sort_key=created_at",
    "Authorization header missing",
    "12:30:45 retry 2/3",
    "skeleton sk-8 pk_1 hf_x",
    "reset_password=1,2; create_session=1",  # counts of effects whose names sound secret
    "Basic 2 cells, host_key ssh-ed25519 SHA256:Zm9v",
    # kill points named by the session write they stop at (ADK, the Agents SDK): a barrier's phase, no secret
    "create_session:after#1 clear_session:before",
    "create_session:before#1: vacuous",  # a point in a verdict's reason, the colon a report puts after it
]

# the same forms used as setting names in JSON-like inputs (workload_params)
KEYED = [f for f in FORMS if f.key]

assert len(FORMS) >= 40 and len({f.name for f in FORMS}) == len(FORMS)


def story_scenario() -> str:
    """A scenario (JSON, which YAML reads) whose ``about``, ``workload_params`` (values and keys),
    effect names and values, racer log lines and racer errors carry every form: two cells of the
    user's workload ``tests.workloads.secret_workloads``, one that runs clean, one whose node raises
    an error quoting every form."""
    import json

    about = "\n".join(["A careless team's workload <script>alert(1)</script>.", *READABLE, *(f.text for f in FORMS)])
    params: dict = {"forms": [f.text for f in FORMS], "note": "the quick brown fox jumps over the lazy dog"}
    params.update({f.key: f.secret for f in KEYED})
    scenario = {
        "name": "secrets_everywhere",
        "about": about,
        "kind": "kill_sweep",
        "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
        "workload": "tests.workloads.secret_workloads:leaky",
        "matrix": {"workload": ["tests.workloads.secret_workloads:leaky", "tests.workloads.secret_workloads:raising"]},
        "workload_params": params,
        "resume": "none",
        "trials": 1,
        "kill_points": ["put(step=1,source=loop):after"],
    }
    return json.dumps(scenario, indent=2)


def verbatim(secret: str) -> list[bytes]:
    """The ways a secret can sit in a file verbatim: as is, JSON-escaped, HTML-escaped."""
    import html
    import json

    forms = {secret, json.dumps(secret)[1:-1], html.escape(secret), html.escape(secret, quote=False)}
    for line in secret.splitlines():  # a multi-line secret (a PEM body) leaks line by line too
        if len(line) >= 12:
            forms.add(line)
    return [f.encode() for f in forms]


def leaked(data: bytes) -> list[str]:
    """The names of the corpus forms whose secret ``data`` holds verbatim."""
    return [f.name for f in FORMS if any(v in data for v in verbatim(f.secret))]

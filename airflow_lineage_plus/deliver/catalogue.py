"""The redaction catalogue: every kind of secret the package removes from events, as data.

Each :class:`SecretKind` names a kind of secret, shows an example and what it becomes, and points to the
:class:`Rule` that finds it. The rules are RE2 patterns over the event's JSON text (see
:mod:`airflow_lineage_plus.deliver.redaction`); the part of a match in a group named ``s…`` is the
secret and is replaced by :data:`MASK`, everything else in the match is context that stays; context in
a group named ``c…`` (a URI's user, a key) is scanned again for secrets of its own. The same
data drives the scanner, the table in docs/reliability.md (:func:`markdown_table`) and the property
tests (which generate secrets from ``first_chars``/``chars``/``sizes`` and embed them in ``template``).

Patterns are written for the JSON encoding of strings: a value never runs over an unescaped ``"``, and
an escape pair (``\\n``, ``\\\\``) is taken whole, so a replacement never splits an escape or leaves a
string; a quoted value may hold escapes (a multi-line SQL literal).
"""

from __future__ import annotations

import string

import attr

#: What every secret is replaced by.
MASK = "***"

#: Names of keys and parameters whose values are secrets (lower case; ``_`` also matches ``-``, ``.``,
#: a space or nothing, so ``api_key`` covers ``apiKey``, ``api-key`` and ``API_KEY``). A name containing
#: one of these is secret-looking, as in Airflow's masker, whose own list
#: (``DEFAULT_SENSITIVE_FIELDS`` and ``[core] sensitive_var_conn_names``) is added where Airflow is
#: installed (:func:`airflow_lineage_plus._compat.sensitive_field_names`).
SECRET_NAMES = (
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "api_key",
    "access_key",
    "private_key",
    "account_key",
    "credential",
    "authorization",
    "auth_header",
    "signature",
    "connection_string",
    "bearer",
    "dsn",
)

# A character of a secret inside a JSON string: no whitespace, no quote, no backslash except an
# escaped backslash (so ``\"``, ``\n`` ... end it and are never split).
_SECRET_CHAR = r"""(?:[^\s"'\\]|\\\\)"""
# In a URI's password: `;` and `,` end it too (JDBC properties, host lists), as they must be %-encoded,
# and so does `:/` (the next URI's scheme: a password never runs into another URI).
_URI_SECRET_CHAR = r"""(?:[^\s"'\\;,:]|\\\\|:[^\s"'\\;,/])"""
# A character of a parameter value: as above, and parameter separators end it too.
_VALUE_CHAR = r"""(?:[^\s"'\\&;,<>()|]|\\\\)"""
_TOKEN_CHARS = r"[A-Za-z0-9\-._~+/]"
# A quoted value's body within one JSON string: it ends at its quote, at an escaped `"` or where the
# string ends, and the closing quote is optional, so every byte read is part of the match (linear scan).
_SQ_BODY = r"""(?:[^'"\\]|\\[^"])*"""
_DQ_BODY = r"""(?:[^"\\]|\\[^"])*"""
# Where a token starts: a word boundary, or right after an escaped newline or tab.
_TOKEN_START = r"(?:\\[nrtbf]|\b)"
# Where a command-line flag starts: after a space, a quote, `=`, or an escaped newline or tab.
_ARG_START = r"""(?:[\s"'=(]|\\[nrt])"""
#: Keys and parameters ending in ``_pass``, ``-pass``, ``.pass`` or ``…Pass`` (``db_pass``, ``dbPass``):
#: ``pass`` inside a word (``passenger``, ``bypass``) is no secret-looking name.
PASS_SUFFIX = r"(?:[_\-.](?i:pass)|(?-i:[a-z0-9]Pass))"


def name_pattern(names: tuple[str, ...]) -> str:
    """RE2 (case-insensitive) for any of ``names``, ``_`` matching ``_``, ``-``, ``.``, a space or nothing."""
    parts = sorted({n.lower() for n in names if n.strip()}, key=len, reverse=True)
    escaped = [r"[_\-. ]?".join(_escape(piece) for piece in part.split("_")) for part in parts]
    return "(?i:" + "|".join(escaped) + ")"


def _escape(text: str) -> str:
    return "".join(c if c.isalnum() else "\\" + c for c in text)


@attr.frozen
class Rule:
    """One RE2 pattern; ``{names}`` in it stands for :func:`name_pattern` of the secret-looking names.

    ``min_digits``: the secret must hold letters and at least this many digits (for token-shaped user
    names, which a pattern alone cannot tell from long user names).
    """

    name: str
    pattern: str
    min_digits: int = 0


@attr.frozen
class SecretKind:
    """A row of the catalogue: a kind of secret, one example, and what the example becomes.

    ``template`` holds ``{secret}`` where generated secrets go (in tests); a generated secret is
    ``prefix``, then one of ``first_chars`` (when given) and ``chars`` up to a length within ``sizes``,
    then ``suffix``.
    """

    name: str
    rule: str
    template: str
    example_secret: str
    redacted: str
    first_chars: str
    chars: str
    sizes: tuple[int, int]
    prefix: str = ""
    suffix: str = ""

    @property
    def example(self) -> str:
        return self.template.format(secret=self.example_secret)


_PUNCT = "!$%^*-_.~+=/@#?"
_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"

#: Every rule starts at a fixed trigger (``://``, a name, a token prefix, ``-----BEGIN``, a flag), never
#: with an open-ended run of letters, and any part read before the match is certain ends at the next
#: trigger of the same rule or within a few bytes: so one left-to-right RE2 scan costs O(n) whatever the
#: text (no search restarts at every byte of a long word, as a leading ``[a-z]*`` made it).
RULES: tuple[Rule, ...] = (
    Rule(
        "pem-private-key",
        r"-----BEGIN[A-Z ]{0,30}PRIVATE KEY-----(?P<s_pem>(?:[^\"\\\-]|\\[^\"]|-[^\"\\\-])*)",
    ),
    Rule(
        "uri-password",
        r"://(?P<c_user>[^\s\"'\\/:@?#]*):"
        rf"(?P<s_uri>[0-9]*(?:[^\s\"'\\0-9/@;,:]|\\\\){_URI_SECRET_CHAR}*|[0-9]+)@[A-Za-z0-9\[]",
    ),
    Rule(
        "uri-token-user",
        r"://(?P<s_user>[A-Za-z0-9_\-.~+=%]{20,})@[^\s\"'\\@/]",
        min_digits=1,
    ),
    Rule(
        "authorization-header",
        r"(?i:authorization|auth[_\-]header)(?:\\\"|')?\s*[=:]\s*(?:\\\"|')?"
        rf"(?P<s_auth>(?i:[a-z]+)\s+{_TOKEN_CHARS}+=*|{_TOKEN_CHARS}+=*)",
    ),
    Rule(
        "sql-identified-by",
        rf"(?i:identified\s+by)\s+(?:'(?P<s_idq>{_SQ_BODY})'?|\\\"(?P<s_idd>{_DQ_BODY})(?:\\\")?"
        r"|(?P<s_idw>[A-Za-z0-9_$#!%^*+\-.@]+))",
    ),
    Rule(
        "cli-user-password",
        rf"{_ARG_START}-(?:u|-user|-proxy-user)(?:\s+|=)(?:'|\\\")?(?P<c_cliu>[^\s\"'\\:]+):"
        rf"(?P<s_cliu>{_SECRET_CHAR}+)",
    ),
    Rule(
        "cli-password-flag",
        # `mysqldump -pPASS` (4 characters or more: `-pv`, `-pr` are flag clusters), `-p'pass'`, and
        # `--password VALUE`, `--db-password=VALUE`, `-token VALUE`
        rf"{_ARG_START}(?:-p(?:'(?P<s_myq>{_SQ_BODY})'?|(?P<s_myp>[^\s\"'\\\-]{_SECRET_CHAR}{{3,}}))"
        r"|--?(?:[A-Za-z0-9]+[\-_])*(?:{names}|(?i:pass))[A-Za-z0-9_\-]*(?:=|\s+)"
        rf"(?:'(?P<s_flq>{_SQ_BODY})'?|\\\"(?P<s_fld>{_DQ_BODY})(?:\\\")?"
        rf"|(?P<s_flv>[^\s\"'\\\-=]{_SECRET_CHAR}*)))",
    ),
    Rule(
        "config-set",
        # `aws configure set aws_secret_access_key V`, `gcloud config set ...`, `heroku config:set`
        r"(?i:\bset)\s+[A-Za-z0-9_.\-/]*?(?:{names})[A-Za-z0-9_.\-]*\s+"
        rf"(?P<s_set>[^\s\"'\\=]{_SECRET_CHAR}*)",
    ),
    Rule(
        "named-value",
        # quoted or braced values after `=`/`:` with any spacing; a bare value only right after `=` or
        # `: ` (so SQL's `a.token_id = b.id` stays as it is)
        r"(?:{names}[A-Za-z0-9_]*|" + PASS_SUFFIX + r")(?:\\\"|')?"
        rf"(?:\s*[=:]\s*(?:'(?P<s_nq>{_SQ_BODY})'?|\\\"(?P<s_nd>{_DQ_BODY})(?:\\\")?|\{{(?P<s_nb>[^}}\"\\]*)\}}?)"
        rf"|(?:=|:[ \t]*)(?P<s_nv>{_VALUE_CHAR}+))",
    ),
    Rule(
        "sql-literal",
        rf"{{names}}[A-Za-z0-9_]*\s+'(?P<s_sql>{_SQ_BODY})'?",
    ),
    Rule("url-signature", r"[?&;](?i:sig|x-goog-signature|code)=(?P<s_sig>" + _VALUE_CHAR + "+)"),
    Rule(
        "webhook-url",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s_slack>[A-Za-z0-9_/\-]+)"
        r"|discord(?:app)?\.com/api/webhooks/(?P<s_discord>[0-9]+/[A-Za-z0-9_\-]+)"
        r"|webhook\.office\.com/webhookb2/(?P<s_teams>[^\s\"'\\?#]+)",
    ),
    Rule(
        "cloud-access-key",
        rf"{_TOKEN_START}(?P<s_aws>(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{{16}})\b"
        rf"|{_TOKEN_START}(?P<s_gcp>AIza[0-9A-Za-z_\-]{{35}})",
    ),
    Rule(
        "service-token",
        rf"{_TOKEN_START}(?P<s_tok>gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{30,}}"
        r"|gl(?:pat|dt|rt|ptt|cbt|imt|oas|soat|ft|agent)-[A-Za-z0-9_\-]{20,}"
        r"|xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[A-Za-z0-9\-]{10,}"
        r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"
        r"|ya29\.[A-Za-z0-9_\-]{20,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_\-]{16,}"
        r"|dapi[0-9a-f]{32}(?:-[0-9]+)?|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"
        r"|sk-(?:proj|svcacct|admin|ant)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{32,}"
        r"|hf_[A-Za-z0-9]{30,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|key-[0-9a-f]{32}"
        r"|dop_v1_[a-f0-9]{64}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|glsa_[A-Za-z0-9_]{32,}"
        r"|ATATT3[A-Za-z0-9_\-=]{20,})",
    ),
    Rule(
        "jwt",
        r"(?:\\[nrtbf]|[^A-Za-z0-9_\-\\])"
        r"(?P<s_jwt>eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)",
    ),
    Rule("bearer-token", rf"(?i:bearer)\s+(?P<s_bearer>{_TOKEN_CHARS}{{8,}}=*)"),
    Rule(
        "secret-key-in-json",
        r"[{,]\"(?P<c_key>[^\"\\]*{names}[^\"\\]*|[^\"\\]*" + PASS_SUFFIX + r"|(?i:pass))\":"
        r"\"(?P<s_key>(?:[^\"\\]|\\.)+)\"",
    ),
)

CATALOGUE: tuple[SecretKind, ...] = (
    SecretKind(
        "password in a URI (may hold `/` or `@`)",
        "uri-password",
        "COPY t FROM 'postgres://etl:{secret}@db.internal:5432/x'",
        "pa/ss@rd",
        "COPY t FROM 'postgres://etl:***@db.internal:5432/x'",
        string.ascii_letters,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (1, 40),
    ),
    SecretKind(
        "token as the user of a URL",
        "uri-token-user",
        "git clone https://{secret}@github.com/acme/pipelines.git",
        "ghx16C7e42F292c6912E7710c838347Ae178B4a",
        "git clone https://***@github.com/acme/pipelines.git",
        string.ascii_letters,
        string.digits,
        (24, 48),
    ),
    SecretKind(
        "secret in a query string",
        "named-value",
        "https://api.example.com/v1/export?format=csv&api_key={secret}&page=2",
        "k3y-9f8e7d6c",
        "https://api.example.com/v1/export?format=csv&api_key=***&page=2",
        _ALNUM,
        _ALNUM + "-_.~+/=%",
        (1, 40),
    ),
    SecretKind(
        "presigned-URL signature",
        "named-value",
        "https://lake.s3.amazonaws.com/o.csv?X-Amz-Expires=60&X-Amz-Signature={secret}",
        "9f2b6c0e1d",
        "https://lake.s3.amazonaws.com/o.csv?X-Amz-Expires=60&X-Amz-Signature=***",
        _ALNUM,
        _ALNUM,
        (8, 64),
    ),
    SecretKind(
        "SAS signature (`sig=`)",
        "url-signature",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={secret}&se=2030-01-01",
        "Zx9%2Bq%3D",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=***&se=2030-01-01",
        _ALNUM,
        _ALNUM + "%+/=",
        (4, 64),
    ),
    SecretKind(
        "JDBC connection string",
        "named-value",
        "jdbc:sqlserver://db:1433;databaseName=sales;user=etl;password={secret};encrypt=true",
        "Pa55word!",
        "jdbc:sqlserver://db:1433;databaseName=sales;user=etl;password=***;encrypt=true",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (1, 40),
    ),
    SecretKind(
        "ODBC connection string (braced value)",
        "named-value",
        "Driver={{ODBC Driver 18}};Server=db;UID=etl;PWD={{{secret}}};",
        "p;w=x",
        "Driver={ODBC Driver 18};Server=db;UID=etl;PWD={***};",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?;, ",
        (1, 40),
    ),
    SecretKind(
        "cloud storage account key",
        "named-value",
        "DefaultEndpointsProtocol=https;AccountName=lake;AccountKey={secret};EndpointSuffix=core.windows.net",
        "dGhpcyBpcyBhIGtleQ==",
        "DefaultEndpointsProtocol=https;AccountName=lake;AccountKey=***;EndpointSuffix=core.windows.net",
        _ALNUM,
        _B64,
        (8, 88),
    ),
    SecretKind(
        "`name=value` or `name: value` in text",
        "named-value",
        "login failed: password={secret} (user etl)",
        "hunter2",
        "login failed: password=*** (user etl)",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (1, 40),
    ),
    SecretKind(
        "SQL password literal",
        "sql-literal",
        "CREATE USER etl WITH PASSWORD '{secret}'",
        "s3cr3t pass",
        "CREATE USER etl WITH PASSWORD '***'",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?;: ",
        (1, 40),
    ),
    SecretKind(
        "SQL `IDENTIFIED BY` clause",
        "sql-identified-by",
        "ALTER USER etl IDENTIFIED BY {secret} ACCOUNT UNLOCK",
        "Tiger42",
        "ALTER USER etl IDENTIFIED BY *** ACCOUNT UNLOCK",
        _ALNUM,
        _ALNUM + "_$#!%^*+-.@",
        (1, 30),
    ),
    SecretKind(
        "SQL `CREDENTIALS` literal",
        "sql-literal",
        "COPY t FROM 's3://lake/t' CREDENTIALS '{secret}' FORMAT CSV",
        "aws_access_key_id=AKIAX;aws_secret_access_key=wJalrXUtnFEMI",
        "COPY t FROM 's3://lake/t' CREDENTIALS '***' FORMAT CSV",
        _ALNUM,
        _ALNUM + "=;/+_-",
        (1, 80),
    ),
    SecretKind(
        "cloud access key id (AWS `AKIA…`)",
        "cloud-access-key",
        "assumed role with {secret} in eu-west-1",
        "AKIAIOSFODNN7EXAMPLE",
        "assumed role with *** in eu-west-1",
        "",
        string.ascii_uppercase + string.digits,
        (16, 16),
        prefix="AKIA",
    ),
    SecretKind(
        "cloud API key (Google `AIza…`)",
        "cloud-access-key",
        "geocoder called with {secret}",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "geocoder called with ***",
        "",
        _ALNUM + "_-",
        (35, 35),
        prefix="AIza",
    ),
    SecretKind(
        "service token with a known prefix (GitHub, GitLab, Slack, npm, PyPI, Hugging Face, Google OAuth …)",
        "service-token",
        "notify via {secret} failed",
        "xoxb-2048-4096-abcdefABCDEF",
        "notify via *** failed",
        "",
        _ALNUM,
        (10, 40),
        prefix="xoxb-",
    ),
    SecretKind(
        "Databricks personal access token (`dapi…`)",
        "service-token",
        "cluster call with {secret} rejected",
        "dapi0123456789abcdef0123456789abcdef",
        "cluster call with *** rejected",
        "",
        "0123456789abcdef",
        (32, 32),
        prefix="dapi",
    ),
    SecretKind(
        "SendGrid API key (`SG.…`)",
        "service-token",
        "mail relay {secret} refused",
        "SG.AbCdEfGhIjKlMnOpQrStUv.wXyZ0123456789-_abcdefghijklmnopqrstuvwxyzABCD",
        "mail relay *** refused",
        "",
        _ALNUM + "-_",
        (16, 50),
        prefix="SG.AbCdEfGhIjKlMnOpQrStUv.",
    ),
    SecretKind(
        "OpenAI or Anthropic API key (`sk-proj-…`, `sk-ant-…`, `sk-…`)",
        "service-token",
        "completion with {secret} returned 429",
        "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8x",
        "completion with *** returned 429",
        "",
        _ALNUM + "-_",
        (20, 60),
        prefix="sk-proj-",
    ),
    SecretKind(
        "Stripe secret or restricted key (`sk_live_…`, `sk_test_…`, `rk_…`)",
        "service-token",
        "charge failed for key {secret}",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "charge failed for key ***",
        "",
        _ALNUM,
        (16, 40),
        prefix="sk_test_",
    ),
    SecretKind(
        "webhook URL (Slack, Discord, Microsoft Teams)",
        "webhook-url",
        "alert sent to https://hooks.slack.com/services/{secret} (200)",
        "T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "alert sent to https://hooks.slack.com/services/*** (200)",
        _ALNUM,
        _ALNUM + "/_-",
        (8, 60),
    ),
    SecretKind(
        "password in `curl -u user:password` (and `--user`)",
        "cli-user-password",
        "curl -u etl:{secret} https://api.example.com/export",
        "hunter2",
        "curl -u etl:*** https://api.example.com/export",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (1, 40),
    ),
    SecretKind(
        "password glued to `-p` (`mysql`, `mysqldump -pPASSWORD`)",
        "cli-password-flag",
        "mysqldump -u etl -p{secret} sales > dump.sql",
        "S3cr3t!",
        "mysqldump -u etl -p*** sales > dump.sql",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (4, 40),
    ),
    SecretKind(
        "value of a secret-named flag (`--password VALUE`, `--db-token=VALUE`)",
        "cli-password-flag",
        "pg_dump --host db --password {secret} sales",
        "hunter2",
        "pg_dump --host db --password *** sales",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#?",
        (1, 40),
    ),
    SecretKind(
        "secret set by a CLI (`aws configure set aws_secret_access_key V`)",
        "config-set",
        "aws configure set aws_secret_access_key {secret} --profile etl",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
        "aws configure set aws_secret_access_key *** --profile etl",
        _ALNUM,
        _ALNUM + "/+=",
        (8, 40),
    ),
    SecretKind(
        "key ending in `_pass` (`db_pass`, `DB_PASS=`, run conf)",
        "named-value",
        "run conf {{'db_pass': '{secret}', 'region': 'eu'}}",
        "hunter2",
        "run conf {'db_pass': '***', 'region': 'eu'}",
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#? ",
        (1, 40),
    ),
    SecretKind(
        "JSON Web Token",
        "jwt",
        "session {secret} expired",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldGwifQ.c2lnbmF0dXJl",
        "session *** expired",
        "",
        _ALNUM + "-_",
        (5, 40),
        prefix="eyJhbGciOiJIUzI1NiJ9.eyJ",
        suffix=".c2lnbmF0dXJl",
    ),
    SecretKind(
        "bearer token",
        "bearer-token",
        "GET /api/v1/lineage with Bearer {secret} returned 401",
        "tok_8f7e6d5c4b3a",
        "GET /api/v1/lineage with Bearer *** returned 401",
        _ALNUM,
        _ALNUM + "-._~+/",
        (8, 64),
    ),
    SecretKind(
        "authorization header (any scheme)",
        "authorization-header",
        "request headers: Authorization: {secret}",
        "Basic ZXRsOmh1bnRlcjI=",
        "request headers: Authorization: ***",
        string.ascii_letters,
        _ALNUM + "+/",
        (8, 64),
        prefix="Basic ",
        suffix="=",
    ),
    SecretKind(
        "PEM private key",
        "pem-private-key",
        "-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----",
        _ALNUM,
        _B64 + "\n",
        (16, 200),
    ),
    SecretKind(
        "value under a secret-looking key (in any facet)",
        "secret-key-in-json",
        '{{"api_key": "{secret}", "region": "eu-west-1"}}',
        "k-123456",
        '{"api_key": "***", "region": "eu-west-1"}',
        _ALNUM,
        _ALNUM + "!$%^*-_.~+=/@#? ",
        (1, 40),
    ),
)

#: A row for the secrets Airflow's masker knows (not a pattern: the literal values it was given).
REGISTERED_SECRETS_ROW = (
    "secret registered with Airflow's masker (connection passwords and extras, sensitive variables)",
    "`copied with password s3cr3t-Pa55word` after `BaseHook.get_connection(...)`",
    "`copied with password ***`",
)


def rule(name: str) -> Rule:
    """The rule named ``name``."""
    for candidate in RULES:
        if candidate.name == name:
            return candidate
    raise KeyError(name)


def main() -> None:
    """Print :func:`markdown_table` (paste it into docs/reliability.md; a test compares them)."""
    print(markdown_table(), end="")


def markdown_table() -> str:
    """The catalogue as the Markdown table docs/reliability.md carries (a test keeps them equal)."""
    lines = ["| kind of secret | example | becomes | rule |", "|---|---|---|---|"]
    for kind in CATALOGUE:
        lines.append(f"| {kind.name} | {_code(kind.example)} | {_code(kind.redacted)} | `{kind.rule}` |")
    what, example, becomes = REGISTERED_SECRETS_ROW
    lines.append(f"| {what} | {example} | {becomes} | Airflow's masker |")
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    shown = text.replace("\n", "\\n").replace("|", "\\|")
    return f"`` {shown} ``" if "`" in shown else f"`{shown}`"


if __name__ == "__main__":
    main()

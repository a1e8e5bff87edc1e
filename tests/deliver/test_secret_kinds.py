"""The kinds of secret an attacker's probe tried (issue 27: 9 of 27 leaked), each through the real
transport with Airflow's masker loaded, reach neither the event log nor the forward target; column names
are never masked, only values; hostile shapes keep their event (a string that cannot be checked within
the budget is withheld whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from airflow_lineage_plus import _compat
from airflow_lineage_plus.deliver import redaction
from airflow_lineage_plus.deliver.serialize import plain
from tests.support.forwarding import logging_and_forwarding
from tests.support.openlineage_spec import validate_event
from tests.support.reliability_events import run_event

#: kind: (text that carries the secret, the secret)
KINDS: dict[str, tuple[str, str]] = {
    "Databricks token": (
        "cluster call with dapi0123456789abcdef0123456789abcdef failed",
        "dapi0123456789abcdef",
    ),
    "Slack webhook URL": (
        "alert to https://hooks.slack.com/services/T024BE7LD/B08Q2A1LM/pQ7sR2tUvW9xY4zA sent",
        "pQ7sR2tUvW9xY4zA",
    ),
    "Discord webhook URL": (
        "alert to https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrSt0123 sent",
        "AbCdEfGhIjKlMnOpQrSt0123",
    ),
    "curl -u user:password": ("curl -u etl:curlS3cretPw https://api.example.com/export", "curlS3cretPw"),
    "mysqldump -pPASSWORD": ("mysqldump -u etl -pMyS3cretPw sales > dump.sql", "MyS3cretPw"),
    "aws configure set": (
        "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCY --profile etl",
        "wJalrXUtnFEMIK7MDENGbPxRfiCY",
    ),
    "run conf db_pass (repr)": ("dag run conf {'db_pass': 'c0nfPassW0rd', 'region': 'eu'}", "c0nfPassW0rd"),
    "DB_PASS= assignment": ("export DB_PASS=envPassS3cret && run", "envPassS3cret"),
    "SendGrid API key": (
        "mail relay SG.AbCdEfGhIjKlMnOpQrStUv.wXyZ0123456789-_abcdefghijklmnopqrstuvwxyzABCD refused",
        "wXyZ0123456789-_abcdefghij",
    ),
    "OpenAI project key": (
        "completion with sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz failed",
        "Ab3dEf6hIj9lMn2pQr5tUv8xYz",
    ),
    "Anthropic key": ("client sk-ant-api03-Ab3dEf6hIj9lMn2pQr5tUv8xYz failed", "Ab3dEf6hIj9lMn2pQr5tUv8xYz"),
    "Stripe test key": ("charge with sk_test_4eC39HqLyjWDarjtT1zdp7dc failed", "4eC39HqLyjWDarjtT1zdp7dc"),
    "Stripe restricted key": ("refund with rk_live_51HabcdefGhijklmnop123 failed", "51HabcdefGhijklmnop123"),
    "GitHub token": ("push with ghp_16C7e42F292c6912E7710c838347Ae178B4a failed", "16C7e42F292c6912E7710c8"),
    "GitLab token": ("clone with glpat-xYz12AbCdEfGhIjKlMnOp failed", "xYz12AbCdEfGhIjKlMnOp"),
    "Slack bot token": ("notify via xoxb-2048-4096-abcdefABCDEF failed", "abcdefABCDEF"),
    "AWS access key id": ("assumed role with AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    "Google API key": (
        "geocoder called with AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "SyA1b2C3d4E5f6G7h8I9j0",
    ),
    "JSON Web Token": (
        "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldGwifQ.c2lnbmF0dXJlMTIz expired",
        "c2lnbmF0dXJlMTIz",
    ),
    "bearer token": ("GET /x with Authorization: Bearer tok_8f7e6d5c4b3a returned 401", "tok_8f7e6d5c4b3a"),
    "URI password": ("COPY t FROM 'postgres://etl:uriS3cretPw@db.internal:5432/x'", "uriS3cretPw"),
    "PGPASSWORD=": ("PGPASSWORD=pgS3cretPw psql -h db", "pgS3cretPw"),
    "MYSQL_PWD=": ("MYSQL_PWD=myPwdS3cret mysql -h db", "myPwdS3cret"),
    "--password=VALUE": ("pg_dump --password=flagS3cretPw sales", "flagS3cretPw"),
    "--password VALUE": ("pg_dump --host db --password flagS3cret2 sales", "flagS3cret2"),
    "SQL IDENTIFIED BY": ("ALTER USER etl IDENTIFIED BY Tiger42Secret ACCOUNT UNLOCK", "Tiger42Secret"),
    "PEM private key": (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0",
    ),
}


@pytest.fixture(scope="module", autouse=True)
def airflows_masker() -> None:
    """Airflow's masker loaded in this process, as in a worker (its names are added to the catalogue's)."""
    from airflow.sdk._shared.secrets_masker import mask_secret

    mask_secret("an-unrelated-registered-secret")
    assert "password" in _compat.sensitive_field_names()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_the_probe_tries_27_kinds() -> None:
    assert len(KINDS) == 27


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_kind_of_secret_reaches_the_event_log_or_the_forward_target_with_airflows_masker_loaded(
    tmp_path: Path, kind: str
) -> None:
    text, secret = KINDS[kind]
    event = plain(run_event("dag.kinds", sql=f"SELECT 1 -- {text}"))
    event["run"]["facets"]["errorMessage"] = {
        "_producer": "p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json",
        "message": text,
        "programmingLanguage": "python",
    }
    logging_and_forwarding(tmp_path).emit(event)
    for target in ("events.jsonl", "forwarded.jsonl"):
        (logged,) = _lines(tmp_path / target)
        validate_event(logged)
        assert secret not in orjson.dumps(logged).decode(), target
        assert "***" in logged["run"]["facets"]["errorMessage"]["message"], target
        assert (
            logged["job"]["facets"]["sql"]["query"]
            == "SELECT 1 -- " + logged["run"]["facets"]["errorMessage"]["message"]
        )


SECRET_LOOKING_COLUMNS = ["password_hash", "api_token_id", "secret_santa", "db_pass", "col_4"]


def test_secret_looking_column_names_are_never_masked_only_values(tmp_path: Path) -> None:
    event = plain(run_event("dag.columns", columns=len(SECRET_LOOKING_COLUMNS)))
    output = event["outputs"][0]
    names = {f"col_{i}": name for i, name in enumerate(SECRET_LOOKING_COLUMNS)}
    for field in output["facets"]["schema"]["fields"]:
        field["name"] = names[field["name"]]
    lineage = output["facets"]["columnLineage"]
    lineage["fields"] = {names[k]: v for k, v in lineage["fields"].items()}
    for entry in lineage["fields"].values():
        for source in entry["inputFields"]:
            source["field"] = names[source["field"]]
    metrics = output["facets"]["dataQualityMetrics"]
    metrics["columnMetrics"] = {names[k]: v for k, v in metrics["columnMetrics"].items()}
    expected = orjson.loads(orjson.dumps(lineage["fields"]))
    logging_and_forwarding(tmp_path).emit(event)
    for target in ("events.jsonl", "forwarded.jsonl"):
        (logged,) = _lines(tmp_path / target)
        validate_event(logged)
        out = logged["outputs"][0]["facets"]
        assert [f["name"] for f in out["schema"]["fields"]] == SECRET_LOOKING_COLUMNS
        assert out["columnLineage"]["fields"] == expected, target
        assert sorted(out["dataQualityMetrics"]["columnMetrics"]) == sorted(SECRET_LOOKING_COLUMNS)
        assert "***" not in orjson.dumps(out).decode(), target


def _hostile(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


HOSTILE = {
    "eyJaaaaa.eyJaaaaa. (500 KB)": (_hostile("eyJaaaaa.eyJaaaaa.", 500_000), None),
    "a...a.ghp_... (1 MB)": (_hostile("a" * 40 + ".ghp_" + "b7" * 18 + " ", 1_000_000), "ghp_b7b7"),
    "password=hunter2& (1 MB, 58 000 secrets)": (_hostile("password=hunter2&", 1_000_000), "hunter2"),
}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_a_hostile_megabyte_keeps_its_event_redacted_or_withheld(tmp_path: Path, shape: str) -> None:
    text, secret = HOSTILE[shape]
    event = plain(run_event("dag.hostile", sql="COPY t FROM 'postgres://etl:hunter3@db/x'"))
    event["job"]["facets"]["documentation"] = {
        "_producer": "p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DocumentationJobFacet.json",
        "description": text,
    }
    logging_and_forwarding(tmp_path, forward_timeout=30).emit(event)
    for target in ("events.jsonl", "forwarded.jsonl"):
        (logged,) = _lines(tmp_path / target)
        validate_event(logged)
        described = logged["job"]["facets"]["documentation"]["description"]
        assert logged["job"]["facets"]["sql"]["query"] == "COPY t FROM 'postgres://etl:***@db/x'"
        if secret is not None:
            assert secret not in described, target
        assert described == redaction.scrub(text), target

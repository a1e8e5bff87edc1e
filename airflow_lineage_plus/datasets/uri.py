"""URIs and OpenLineage (namespace, name) pairs, each direction written as a table keyed by scheme.

* :func:`parse_uri`: a dataset URI -> its identity (``_RAW_PARSERS`` for the schemes read from the raw text,
  ``_PARSERS`` for the ones read after ``urlsplit``, ``_parse_generic`` for any other scheme);
* :func:`uri_of`: an identity -> the URI Airflow's ``Asset`` keeps and that parses back to it
  (``_OPAQUE_FORMATTERS`` for namespaces that are not URIs, ``_FORMATTERS`` for the others);
* :func:`identity_of_pair`: a (namespace, name) pair found in an event -> its normalised identity
  (``_OPAQUE_NORMALISERS`` and ``_NORMALISERS``, the same split).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import NamedTuple, Union

from airflow_lineage_plus.datasets.identity import (
    BIGQUERY_NAMESPACE,
    CONNECTION_TABLE_SCHEME,
    EMBEDDED_SCHEMES,
    FILE_NAMESPACE,
    GCS_SCHEMES,
    OPAQUE_SCHEME,
    POSTGRES_SCHEMES,
    S3_SCHEMES,
    ConnectionTable,
    Identity,
    require_text,
)
from airflow_lineage_plus.datasets.paths import (
    clean_path,
    file_identity,
    object_store_identity,
    with_reduction,
)
from airflow_lineage_plus.datasets.tables import (
    bigquery_table,
    connection_table,
    embedded_identity,
    mysql_table,
    postgres_table,
    redshift_table,
    rsplit_name,
    snowflake_table,
    sql_namespace,
)
from airflow_lineage_plus.exceptions import DatasetNameError

#: What a URI names: a dataset, or a table whose identity waits for its Airflow connection.
Parsed = Union[Identity, ConnectionTable]  # noqa: UP007 - a runtime alias

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")


# ----------------------------------------------------------------------------------------------------
# URI -> identity
# ----------------------------------------------------------------------------------------------------


class _Uri(NamedTuple):
    """A dataset URI split once: ``netloc`` without user info, ``segments`` the unquoted path parts."""

    text: str
    scheme: str
    netloc: str
    hostname: str | None
    port: int | None
    path: str
    segments: list[str]


def _split(text: str, scheme: str) -> _Uri:
    if "://" not in text:
        raise DatasetNameError(f"uri {text!r} is malformed: write {scheme}://<authority>/<path>")
    if any(ch.isspace() for ch in text):
        raise DatasetNameError(f"uri {text!r} contains whitespace: percent-encode it (%20) or remove it")
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise DatasetNameError(f"uri {text!r} is malformed ({exc}): check the host and port") from None
    netloc = parts.netloc.rpartition("@")[2]  # user info never belongs to a dataset's identity
    segments = [urllib.parse.unquote(s) for s in parts.path.strip("/").split("/") if s]
    return _Uri(text, scheme, netloc, parts.hostname, port, parts.path, segments)


def _parse_file(text: str, scheme: str) -> Parsed:
    rest = text[len(scheme) + 1 :]
    if rest.startswith("//"):
        parts = urllib.parse.urlsplit(text)
        return file_identity(parts.netloc, parts.path or "/")
    return file_identity("", "/" + rest.lstrip("/"))


def _parse_embedded(text: str, scheme: str) -> Parsed:
    # Airflow normalises sqlite:///abs/db/table to sqlite:/abs/db/table (no authority): accept both.
    segments = [s for s in text[len(scheme) + 1 :].split("/") if s]
    if len(segments) < 2 or any(ch.isspace() for ch in text):
        raise DatasetNameError(f"uri {text!r} must be {scheme}:///<absolute db path>/<table>")
    return embedded_identity(scheme, "/" + "/".join(segments[:-1]), urllib.parse.unquote(segments[-1]))


def _parse_object_store(uri: _Uri) -> Parsed:
    scheme = "s3" if uri.scheme in S3_SCHEMES else "gs"
    return object_store_identity(scheme, uri.netloc, uri.path, uri.text)


def _parse_connection_table(uri: _Uri) -> Parsed:
    if not uri.netloc or len(uri.segments) != 1:
        raise DatasetNameError(f"uri {uri.text!r}: write {CONNECTION_TABLE_SCHEME}://<conn_id>/<table>")
    return connection_table(uri.netloc, uri.segments[0])


def _parse_opaque(uri: _Uri) -> Parsed:
    if not uri.netloc or not uri.path.strip("/"):
        raise DatasetNameError(f"uri {uri.text!r}: write {OPAQUE_SCHEME}://<namespace>/<name>")
    return identity_of_pair(urllib.parse.unquote(uri.netloc), urllib.parse.unquote(uri.path[1:]))


def _parse_postgres_or_redshift(uri: _Uri) -> Parsed:
    text, segments = uri.text, uri.segments
    if len(segments) != 3:
        raise DatasetNameError(
            f"uri {text!r} must name /<database>/<schema>/<table>, found {len(segments)} path parts"
        )
    if not uri.hostname:
        raise DatasetNameError(
            f"uri {text!r} has no host: write {uri.scheme}://<host>:<port>/<db>/<schema>/<table>"
        )
    database, schema, table = segments
    if uri.scheme == "redshift":
        return redshift_table(uri.hostname, database, schema, table, None, uri.port or 5439)
    return postgres_table(uri.hostname, database, schema, table, uri.port or 5432)


def _parse_snowflake(uri: _Uri) -> Parsed:
    if len(uri.segments) != 3 or not uri.netloc:
        raise DatasetNameError(f"uri {uri.text!r} must be snowflake://<account>/<database>/<schema>/<table>")
    return snowflake_table(uri.netloc, *uri.segments)


def _parse_bigquery(uri: _Uri) -> Parsed:
    if len(uri.segments) != 2 or not uri.netloc:
        raise DatasetNameError(f"uri {uri.text!r} must be bigquery://<project>/<dataset>/<table>")
    return bigquery_table(uri.netloc, uri.segments[0], uri.segments[1])


def _parse_mysql(uri: _Uri) -> Parsed:
    if len(uri.segments) != 2 or not uri.hostname:
        raise DatasetNameError(f"uri {uri.text!r} must be mysql://<host>:<port>/<database>/<table>")
    return mysql_table(uri.hostname, uri.segments[0], uri.segments[1], uri.port or 3306)


def _parse_kafka(uri: _Uri) -> Parsed:
    if not uri.netloc or len(uri.segments) != 1:
        raise DatasetNameError(f"uri {uri.text!r} must be kafka://<host>:<port>/<topic>")
    return Identity(f"kafka://{uri.netloc.lower()}", uri.segments[0])


def _parse_airflow(uri: _Uri) -> Parsed:
    raise DatasetNameError(f"uri {uri.text!r}: the airflow:// scheme is reserved by Airflow")


def _parse_generic(uri: _Uri) -> Parsed:
    # Any other scheme: namespace <scheme>://<authority>, name the path (leading slash kept, as the spec's
    # HDFS/DBFS/ABFSS examples do).
    text, scheme, netloc, path = uri.text, uri.scheme, uri.netloc, uri.path
    if not netloc:
        raise DatasetNameError(f"uri {text!r} has no authority: write {scheme}://<authority>/<path>")
    if not path.strip("/"):
        raise DatasetNameError(
            f"uri {text!r} names no dataset: {scheme}:// is not a known scheme, so the path must name it "
            f"({scheme}://{netloc}/<name>)"
        )
    return with_reduction(f"{scheme}://{netloc.lower()}", clean_path(path, "path", text))


#: Schemes read from the raw text, before ``urlsplit`` (their URIs need not have an authority).
_RAW_PARSERS: dict[str, Callable[[str, str], Parsed]] = {
    "file": _parse_file,
    **dict.fromkeys(EMBEDDED_SCHEMES, _parse_embedded),
}

#: Schemes read from the split URI; any other scheme goes to ``_parse_generic``.
_PARSERS: dict[str, Callable[[_Uri], Parsed]] = {
    **dict.fromkeys(S3_SCHEMES | GCS_SCHEMES, _parse_object_store),
    CONNECTION_TABLE_SCHEME: _parse_connection_table,
    OPAQUE_SCHEME: _parse_opaque,
    **dict.fromkeys(POSTGRES_SCHEMES | {"redshift"}, _parse_postgres_or_redshift),
    "snowflake": _parse_snowflake,
    "bigquery": _parse_bigquery,
    "mysql": _parse_mysql,
    "kafka": _parse_kafka,
    "airflow": _parse_airflow,
}


def parse_uri(text: str) -> Parsed:
    """The identity a dataset URI (or an absolute path) names; ``text`` is already stripped."""
    if text.startswith("/"):
        return file_identity("", text)
    if ":" not in text or not _SCHEME_RE.fullmatch(text.split(":", 1)[0]):
        raise DatasetNameError(
            f"uri {text!r} is not a URI: write <scheme>://<authority>/<path> (s3://bucket/key) "
            f"or an absolute path"
        )
    scheme = text.split(":", 1)[0].lower()
    raw_parser = _RAW_PARSERS.get(scheme)
    if raw_parser is not None:
        return raw_parser(text, scheme)
    uri = _split(text, scheme)
    return _PARSERS.get(scheme, _parse_generic)(uri)


# ----------------------------------------------------------------------------------------------------
# Identity -> URI
# ----------------------------------------------------------------------------------------------------


def _file_uri(namespace: str, name: str) -> str:
    return f"file://{name}" if name.startswith("/") else f"file:///{name}"


def _bigquery_uri(namespace: str, name: str) -> str:
    project, dataset_name, table = rsplit_name(name, 3)
    return f"bigquery://{project}/{dataset_name}/{table}"


def _opaque_uri(namespace: str, name: str) -> str:
    return f"{OPAQUE_SCHEME}://{urllib.parse.quote(namespace, safe='')}/{name}"


def _object_store_uri(namespace: str, name: str) -> str:
    return f"{namespace}/" if name == "/" else f"{namespace}/{name}"


def _sql_uri(namespace: str, name: str) -> str:
    scheme = namespace.partition("://")[0]
    pieces = rsplit_name(name, 2 if scheme == "mysql" else 3)
    fold = str.upper if scheme == "snowflake" else str.lower
    # A part that folding would change came from a quoted identifier: quote it so the URI parses back.
    quoted = [p if fold(p) == p and "." not in p else '"' + p.replace('"', '""') + '"' for p in pieces]
    return namespace + "".join("/" + urllib.parse.quote(p, safe="") for p in quoted)


def _embedded_uri(namespace: str, name: str) -> str:
    # The form Airflow's Asset keeps (it drops the empty authority of sqlite:///...).
    scheme = namespace.partition("://")[0]
    pieces = name.split(".")
    quoted = [p if p.lower() == p else '"' + p.replace('"', '""') + '"' for p in pieces]
    db_path = namespace[len(scheme) + 3 :]
    return f"{scheme}:{db_path}/{urllib.parse.quote('.'.join(quoted), safe='.')}"


def _generic_uri(namespace: str, name: str) -> str:
    return f"{namespace}{name}" if name.startswith("/") else f"{namespace}/{name}"


#: Namespaces that are not URIs; any other one becomes an ``x-openlineage://`` URI.
_OPAQUE_FORMATTERS: dict[str, Callable[[str, str], str]] = {
    FILE_NAMESPACE: _file_uri,
    BIGQUERY_NAMESPACE: _bigquery_uri,
}

#: URI namespaces by scheme; any other scheme goes to ``_generic_uri``.
_FORMATTERS: dict[str, Callable[[str, str], str]] = {
    "s3": _object_store_uri,
    "gs": _object_store_uri,
    **dict.fromkeys(("postgres", "redshift", "snowflake", "mysql"), _sql_uri),
    **dict.fromkeys(EMBEDDED_SCHEMES, _embedded_uri),
}


def uri_of(namespace: str, name: str) -> str:
    """A URI Airflow's ``Asset`` accepts and that parses back to the normalised (namespace, name)."""
    scheme, sep, _ = namespace.partition("://")
    if not sep:
        return _OPAQUE_FORMATTERS.get(namespace, _opaque_uri)(namespace, name)
    return _FORMATTERS.get(scheme, _generic_uri)(namespace, name)


# ----------------------------------------------------------------------------------------------------
# (namespace, name) -> identity
# ----------------------------------------------------------------------------------------------------


class _Pair(NamedTuple):
    """An OpenLineage (namespace, name) pair, with the namespace's scheme (lower-cased) and authority."""

    namespace: str
    name: str
    scheme: str
    authority: str


def _absolute(name: str) -> str:
    return name if name.startswith("/") else "/" + name


def _local_file_pair(pair: _Pair) -> Identity:
    return file_identity("", _absolute(pair.name))


def _bigquery_pair(pair: _Pair) -> Identity:
    project, dataset_name, table = rsplit_name(pair.name, 3)
    return bigquery_table(project, dataset_name, table)


def _opaque_pair(pair: _Pair) -> Identity:
    namespace, name = pair.namespace, pair.name
    if any(ch.isspace() for ch in namespace + name):
        raise DatasetNameError(f"namespace/name {namespace!r}/{name!r} contains whitespace: remove it")
    return Identity(namespace, name)


def _object_store_pair(pair: _Pair) -> Identity:
    scheme = "s3" if pair.scheme in S3_SCHEMES else "gs"
    return object_store_identity(scheme, pair.authority.strip("/"), pair.name)


def _file_pair(pair: _Pair) -> Identity:
    return file_identity(pair.authority, _absolute(pair.name))


def _sql_pair(pair: _Pair) -> Identity:
    # Names found in events are already in the engine's form (folded, quotes removed): keep them, and
    # normalise only the namespace (scheme alias, host case, default port, Snowflake account form).
    name = pair.name
    levels = 2 if pair.scheme == "mysql" else 3
    if len(name.split(".", levels - 1)) != levels or any(ch.isspace() for ch in name):
        raise DatasetNameError(
            f"name {name!r} for {pair.namespace} must be {levels} dot-separated parts without whitespace"
        )
    return Identity(sql_namespace(pair.scheme, pair.authority), name)


def _embedded_pair(pair: _Pair) -> Identity:
    authority = pair.authority
    return embedded_identity(pair.scheme, "/" + authority.lstrip("/") if authority else "/", pair.name)


def _kafka_pair(pair: _Pair) -> Identity:
    return Identity(f"kafka://{pair.authority.lower()}", pair.name.strip("/"))


def _generic_pair(pair: _Pair) -> Identity:
    namespace = f"{pair.scheme}://{pair.authority.lower()}"
    return with_reduction(namespace, clean_path(pair.name, "name", pair.namespace + pair.name))


#: Namespaces that are not URIs, by their lower-cased text; any other one is kept as written.
_OPAQUE_NORMALISERS: dict[str, Callable[[_Pair], Identity]] = {
    FILE_NAMESPACE: _local_file_pair,
    BIGQUERY_NAMESPACE: _bigquery_pair,
}

#: URI namespaces by scheme; any other scheme goes to ``_generic_pair``.
_NORMALISERS: dict[str, Callable[[_Pair], Identity]] = {
    **dict.fromkeys(S3_SCHEMES | GCS_SCHEMES, _object_store_pair),
    "file": _file_pair,
    **dict.fromkeys(POSTGRES_SCHEMES | {"redshift", "snowflake", "mysql"}, _sql_pair),
    **dict.fromkeys(EMBEDDED_SCHEMES, _embedded_pair),
    "kafka": _kafka_pair,
}


def identity_of_pair(namespace: str, name: str) -> Identity:
    """Normalise an OpenLineage (namespace, name) pair by routing it through the platform's rules."""
    namespace, name = require_text(namespace, "namespace"), require_text(name, "name")
    scheme, sep, authority = namespace.partition("://")
    pair = _Pair(namespace, name, scheme.lower(), authority)
    if not sep:
        return _OPAQUE_NORMALISERS.get(pair.scheme, _opaque_pair)(pair)
    return _NORMALISERS.get(pair.scheme, _generic_pair)(pair)

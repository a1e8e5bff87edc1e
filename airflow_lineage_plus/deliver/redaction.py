"""Redaction: every secret of the catalogue and every secret Airflow's masker knows, out of an event.

The scan runs on the event's JSON text, once, with RE2 (``google-re2``): an automaton, not a
backtracking engine, so its time is linear in the text whatever the input (a hostile 1 MB string
costs milliseconds; ``benchmarks/redaction_bench.py``), on every supported Python (3.10 has no
possessive quantifiers or atomic groups to make ``re`` safe). One pass finds all kinds of
:data:`~airflow_lineage_plus.deliver.catalogue.CATALOGUE` at once; only the secret part of a match is
replaced by ``***``, in place in the JSON text; strings that hold no secret are never decoded.

Then the secrets registered with Airflow's masker in this process (connection passwords and extras,
sensitive variables: :func:`airflow_lineage_plus._compat.registered_secret_patterns`) are replaced
wherever they appear, by a second RE2 pass over their JSON-encoded literals.

Values under secret-looking keys (``{"password": "..."}``, any facet, any depth) are masked by the
``secret-key-in-json`` rule; when such a key holds an object or a list (rare), every string inside it
is masked on the decoded event instead (as Airflow's masker does). When a replacement made the text
invalid JSON (a registered secret that is also a number, say), the event is redacted again string by
string on the decoded event. What cannot be checked raises :class:`UncheckedEventError`: the caller
then sends nothing (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson
import re2

from airflow_lineage_plus import _compat
from airflow_lineage_plus.deliver import catalogue
from airflow_lineage_plus.exceptions import UncheckedEventError

MASK = catalogue.MASK.encode()
#: More different secrets than this in one event is not a real event: it is not sent (fail closed), so a
#: flood of secrets is checked in bounded time. The same secret repeated counts once.
MAX_SECRETS = 2_000
#: Matches (repeats included) one event may hold before it is not sent either: bounds the time a string
#: made of nothing but secrets costs (a few microseconds each).
MAX_MATCHES = 20_000
#: A match longer than this is masked whole instead of being taken apart: no real secret (nor its
#: context) is this long, and taking a megabyte-long match apart with captures costs ~0.3 s where
#: masking it costs nothing. Over-redaction of a hostile string, never a leak.
LONG_MATCH = 4096
_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1  # bytes in, byte offsets out; UTF-8 passes through
_OPTIONS.max_mem = 64 << 20
_BOUNDS = re2.Options()  # where matches are, without captures: the automaton alone
_BOUNDS.encoding = _OPTIONS.encoding
_BOUNDS.max_mem = _OPTIONS.max_mem
_BOUNDS.never_capture = True
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


#: A secret-looking key holding an object or a list: its strings are masked on the decoded event.
CONTAINER = "container"
#: Found by :meth:`Scanner.scan` when a match was longer than :data:`LONG_MATCH` (masked whole). Where
#: that cut through the JSON's structure, the event is redacted string by string, and a string holding
#: such a match becomes ``***`` whole.
LONG = "long match"


class Scanner:
    """The catalogue's rules as one RE2 pattern, for a given list of secret-looking names.

    ``probes`` (name, RE2 pattern) are looked for in the same pass: :meth:`scan` says which occur, so a
    caller needs no pass of its own over the text (the size budget asks for its cleanup markers).
    """

    def __init__(self, names: tuple[str, ...], probes: tuple[tuple[str, str], ...] = ()) -> None:
        names_re = catalogue.name_pattern(names)
        parts = [f"(?:{r.pattern.replace('{names}', names_re)})" for r in catalogue.RULES]
        container = f'[{{,]"[^"\\\\]*{names_re}[^"\\\\]*":[\\[{{]'
        parts += [f"(?P<p_{name}>{pattern})" for name, pattern in ((CONTAINER, container), *probes)]
        self.regex = re2.compile("|".join(parts).encode(), _OPTIONS)
        # without names: RE2 keeps named groups as captures even with never_capture (``groups`` stays
        # above 0), so every match was taken by a capturing engine, ~60 ns a byte inside a long match
        # where the automaton alone costs ~1.5
        self.bounds = re2.compile(_NAMED_GROUP.sub("(?:", "|".join(parts)).encode(), _BOUNDS)
        self.key_regex = re.compile(names_re.replace("(?i:", "(?:"), re.IGNORECASE)
        min_digits = {r.name: r.min_digits for r in catalogue.RULES}
        # (group index, digits the secret needs, probe name or "" for a secret)
        self.groups: list[tuple[int, int, str]] = []
        self.context: list[int] = []  # groups of context that may hold secrets of its own
        for name, index in sorted(self.regex.groupindex.items(), key=lambda item: item[1]):
            label = name.decode() if isinstance(name, bytes) else name
            if label.startswith("c_"):
                self.context.append(index)
            elif label.startswith("p_"):
                self.groups.append((index, 0, label[2:]))
            else:
                owner = next(r.name for r in catalogue.RULES if f"(?P<{label}>" in r.pattern)
                self.groups.append((index, min_digits[owner], ""))

    def scan(
        self, text: bytes, pos: int = 0, end: int | None = None
    ) -> tuple[list[tuple[int, int]], set[str]]:
        """(where the secrets of ``text`` (JSON) are, in order, not overlapping; the probes found).

        Two stages: the automaton without captures finds where matches are (fast); each distinct match
        is then taken apart by the capturing pattern on just its own bytes (the same strings repeat in
        an event: a namespace in every column-lineage entry), so a match costs microseconds. A match
        longer than :data:`LONG_MATCH` is masked whole.
        """
        found: list[tuple[int, int]] = []
        probes: set[str] = set()
        parts: dict[bytes, tuple[list[tuple[int, int]], str]] = {}
        for count, match in enumerate(self.bounds.finditer(text, pos, len(text) if end is None else end)):
            if count >= MAX_MATCHES:
                raise UncheckedEventError(f"more than {MAX_MATCHES} secrets in one event")
            start, stop = match.span()
            if stop - start > LONG_MATCH:
                found.append((start, stop))
                probes.add(LONG)
                continue
            piece = text[start:stop]
            known = parts.get(piece)
            if known is None:
                known = parts[piece] = self._take_apart(piece)
                if len(parts) > MAX_SECRETS:
                    raise UncheckedEventError(f"more than {MAX_SECRETS} different secrets in one event")
            spans, probe = known
            found += [(start + a, start + b) for a, b in spans]
            if probe:
                probes.add(probe)
        return found, probes

    def _take_apart(self, piece: bytes) -> tuple[list[tuple[int, int]], str]:
        """(secret spans within ``piece``, a whole match; the probe it is, or "")."""
        match = self.regex.fullmatch(piece)
        if match is None:  # cannot happen: the same pattern matched these bytes
            raise UncheckedEventError("a match could not be taken apart")
        spans: list[tuple[int, int]] = []
        for index in self.context:
            start, stop = match.span(index)
            if stop > start:
                spans += self.scan(piece, start, stop)[0]
        for index, min_digits, probe in self.groups:
            start, stop = match.span(index)
            if start < 0:
                continue
            if probe:
                return spans, probe
            if not min_digits or _token_like(piece[start:stop], min_digits):
                spans.append((start, stop))
            break
        return spans, ""

    def secret_key(self, key: Any) -> bool:
        """Whether ``key`` is a secret-looking name (its value is masked)."""
        return isinstance(key, str) and self.key_regex.search(key) is not None


def _token_like(secret: bytes, min_digits: int) -> bool:
    return sum(c in b"0123456789" for c in secret) >= min_digits and any(
        c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" for c in secret
    )


@lru_cache(maxsize=8)
def _scanner(names: tuple[str, ...], probes: tuple[tuple[str, str], ...]) -> Scanner:
    return Scanner(names, probes)


def scanner(probes: tuple[tuple[str, str], ...] = ()) -> Scanner:
    """The scanner for the catalogue's names plus Airflow's sensitive field names in this process."""
    names = tuple(sorted(set(catalogue.SECRET_NAMES) | set(_compat.sensitive_field_names())))
    return _scanner(names, probes)


class _Literals:
    """The secrets Airflow's maskers hold, JSON-encoded: one RE2 pattern, run only on a text that holds
    one of them (a few ``bytes.find`` cost a tenth of the automaton's pass over a wide event)."""

    #: Above this many secrets the automaton alone is cheaper than looking for each.
    MAX_NEEDLES = 16

    def __init__(self, literals: list[bytes]) -> None:
        self.regex = re2.compile(b"|".join(re2.escape(lit) for lit in literals), _BOUNDS)
        self.needles = tuple(literals) if len(literals) <= self.MAX_NEEDLES else ()

    def finditer(self, text: bytes) -> Any:
        if self.needles and not any(needle in text for needle in self.needles):
            return iter(())
        return self.regex.finditer(text)


@lru_cache(maxsize=32)
def _literal_regex(patterns: tuple[str, ...]) -> _Literals | None:
    literals = {orjson.dumps(_UNESCAPE.sub(r"\1", p))[1:-1] for p in patterns}
    ordered = sorted((lit for lit in literals if lit), key=len, reverse=True)
    return _Literals(ordered) if ordered else None


def registered_secrets() -> _Literals | None:
    """One RE2 pattern of the secrets Airflow's maskers hold here, JSON-encoded; None when there are none."""
    return _literal_regex(tuple(_compat.registered_secret_patterns()))


def _splice(text: bytes, spans: list[tuple[int, int]]) -> bytes:
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], MASK]
        last = end
    pieces.append(text[last:])
    return b"".join(pieces)


def _scan(text: bytes, scan: Scanner, literals: Any) -> tuple[bytes, int, set[str]]:
    """``text`` (JSON) with the catalogue's secrets and the registered ones replaced; how many; the
    probes found."""
    spans, probes = scan.scan(text)
    if spans:
        text = _splice(text, spans)
    count = len(spans)
    if literals is not None:
        hits = []
        for match in literals.finditer(text):
            hits.append(match.span())
            if len(hits) + count > MAX_MATCHES:
                raise UncheckedEventError(f"more than {MAX_MATCHES} secrets in one event")
        if hits:
            text = _splice(text, hits)
            count += len(hits)
    return text, count, probes


def redact_json(raw: bytes, probes: tuple[tuple[str, str], ...] = ()) -> tuple[bytes, int, set[str]]:
    """The JSON text of an event with every secret replaced by ``***``; how many were replaced; which
    of ``probes`` occur in ``raw``.

    Raises :class:`UncheckedEventError` when the event cannot be checked.
    """
    scan, literals = scanner(probes), registered_secrets()
    clean, count, found = _scan(raw, scan, literals)
    masked = 0
    if CONTAINER in found:  # a secret-looking key holding an object or a list: mask it decoded
        data = orjson.loads(raw)
        masked = _mask_secret_keys(data, scan)
        raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        clean, count, _ = _scan(raw, scan, literals)
    if count:
        try:
            orjson.loads(clean)
        except orjson.JSONDecodeError:  # a replacement left a string: redact string by string
            data = orjson.loads(raw)
            count = redact_tree(data, scan)
            clean = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return clean, count + masked, found


def scrub(text: str, scan: Scanner | None = None) -> str:
    """``text`` with every secret of the catalogue and every registered secret replaced by ``***``."""
    scan = scan or scanner()
    encoded = orjson.dumps(text)
    clean, count, found = _scan(encoded, scan, registered_secrets())
    if not count:
        return text
    if LONG in found:
        return catalogue.MASK
    try:
        value = orjson.loads(clean)
    except orjson.JSONDecodeError:  # a registered secret ran over an escape: the catalogue, then Airflow's
        value = orjson.loads(_scan(encoded, scan, None)[0])
        mask = _compat.secrets_redactor()
        value = mask(value) if mask is not None else value
    if not isinstance(value, str):
        raise UncheckedEventError("a string could not be redacted")
    return value


def redact_tree(value: Any, scan: Scanner | None = None) -> int:
    """Redact every string of a decoded event (dicts and lists), in place; returns how many changed.

    The slow path (a Python walk over every string), for events the JSON pass cannot handle.
    """
    scan = scan or scanner()
    counter = [_mask_secret_keys(value, scan)]
    _walk(value, lambda text: scrub(text, scan), scan.secret_key, counter)
    return counter[0]


def _walk(value: Any, clean: Callable[[str], str], secret: Callable[[Any], bool], counter: list[int]) -> None:
    keyed = isinstance(value, dict)
    items = value.items() if keyed else enumerate(value) if isinstance(value, list) else ()
    renamed = {}
    for key, item in list(items):
        if isinstance(item, str):
            new = catalogue.MASK if item and keyed and secret(key) else clean(item)
            if new != item:
                value[key] = new
                counter[0] += 1
        elif isinstance(item, dict | list):
            _walk(item, clean, secret, counter)
        if keyed and isinstance(key, str) and (new_key := clean(key)) != key:
            renamed[key] = new_key
    for key, new_key in renamed.items():  # keys are strings that leave too
        value[new_key] = value.pop(key)
        counter[0] += 1


def _mask_secret_keys(value: Any, scan: Scanner) -> int:
    """Mask every string under a secret-looking key, at any depth; returns how many."""
    count = 0
    if isinstance(value, dict):
        for key, item in value.items():
            if scan.secret_key(key) and isinstance(item, dict | list):
                count += _mask_leaves(item)
            elif isinstance(item, dict | list):
                count += _mask_secret_keys(item, scan)
    elif isinstance(value, list):
        for item in value:
            count += _mask_secret_keys(item, scan)
    return count


def _mask_leaves(value: Any) -> int:
    count = 0
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in list(items):
        if isinstance(item, str) and item != catalogue.MASK:
            value[key] = catalogue.MASK
            count += 1
        elif isinstance(item, dict | list):
            count += _mask_leaves(item)
    return count

"""Redaction: every secret of the catalogue and every secret Airflow's masker knows, out of an event.

The scan runs on the event's JSON text, once, left to right, with RE2 (``google-re2``): one automaton
for every rule of :data:`~airflow_lineage_plus.deliver.catalogue.RULES`, written so that no search
re-reads more than a few bytes an earlier search read (each rule starts at a fixed trigger; see the
catalogue), so the time is O(n) whatever the input, on every supported Python (docs/reliability.md,
"Hostile strings", has the figures). Only the secret part of a match is
replaced by ``***``, in place in the JSON text; strings that hold no secret are never decoded.

Then the secrets registered with Airflow's masker in this process (connection passwords and extras,
sensitive variables: :func:`airflow_lineage_plus._compat.registered_secret_patterns`) are replaced
wherever they appear, by a second RE2 pass over their JSON-encoded literals.

Values under secret-looking keys (``{"password": "..."}``, any facet, any depth) are masked by the
``secret-key-in-json`` rule; when such a key holds an object or a list (rare), every string inside it
is masked on the decoded event instead (as Airflow's masker does) — except column-lineage and
column-metrics entries keyed by a column name (:data:`COLUMNS`): names are never masked.

The Python work per match is bounded by a budget (:data:`FIELD_MATCHES` per string,
:data:`EVENT_MATCHES` and :data:`MAX_SECRETS` per event): a string past it is withheld whole
(:data:`WITHHELD` replaces its content) and the scan goes on; the event is kept. When a replacement
made the text invalid JSON (a registered secret that is also a number, say), the event is redacted
again string by string on the decoded event. What cannot be checked at all raises
:class:`UncheckedEventError`: the caller then sends nothing (fail closed).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

import orjson
import re2

from airflow_lineage_plus import _compat
from airflow_lineage_plus.deliver import catalogue
from airflow_lineage_plus.exceptions import UncheckedEventError

MASK = catalogue.MASK.encode()
#: Matches (repeats included) one string of the event may hold; past that the string is withheld whole
#: (:data:`WITHHELD` replaces it) and the scan goes on after it: the Python work per match stays bounded
#: whatever the string.
FIELD_MATCHES = 1_000
#: Matches the whole event may hold; past that every further string holding one is withheld whole.
EVENT_MATCHES = 10_000
#: Different secrets one event may hold (each is taken apart once by the capturing pattern); a string
#: holding a new one past that is withheld whole. The same secret repeated
#: counts once.
MAX_SECRETS = 2_000
#: A match longer than this is masked whole instead of being taken apart: no real secret (nor its
#: context) is this long, and the capturing pattern's time grows with the match where masking it whole
#: does not (docs/reliability.md, "Hostile strings"). Over-redaction of a hostile string, never a leak.
LONG_MATCH = 4096
#: What replaces a string that could not be checked within the budget (never the event: it is kept).
WITHHELD = "[withheld by airflow-lineage-plus: {size} bytes not checked for secrets within the budget]"
_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1  # bytes in, byte offsets out; UTF-8 passes through
_OPTIONS.max_mem = 64 << 20
_BOUNDS = re2.Options()  # where matches are, without captures: the automaton alone
_BOUNDS.encoding = _OPTIONS.encoding
_BOUNDS.max_mem = _OPTIONS.max_mem
_BOUNDS.never_capture = True
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
#: From inside a JSON string to its closing quote.
_STRING_REST = re2.compile(rb'(?:[^"\\]|\\(?s:.))*"', _BOUNDS)


#: A secret-looking key holding an object or a list: its strings are masked on the decoded event.
CONTAINER = "container"
#: A column name that looks secret (``password_hash``) keying a column-lineage or column-metrics entry:
#: a name, not a secret, so the entry is left as it is (found before :data:`CONTAINER`, which it wins).
COLUMNS = "columns"
#: The first keys of column-lineage (``inputFields``) and column-metrics entries, sorted as serialised.
_COLUMN_ENTRY_KEYS = (
    "inputFields|transformationDescription|transformationType"
    "|count|distinctCount|max|min|nullCount|quantiles|sum"
)


class Scan(NamedTuple):
    """What one scan found: secret spans (in order, not overlapping), strings withheld (content start,
    end), the probes that occur."""

    spans: list[tuple[int, int]]
    withheld: list[tuple[int, int]]
    probes: set[str]


class Redacted(NamedTuple):
    """An event's JSON text with every secret replaced; how many were; how many strings were withheld
    whole (:data:`WITHHELD`); which probes occur."""

    text: bytes
    masked: int
    withheld: int
    probes: set[str]


class Scanner:
    """The catalogue's rules as one RE2 pattern, for a given list of secret-looking names.

    ``probes`` (name, RE2 pattern) are looked for in the same pass: :meth:`scan` says which occur, so a
    caller needs no pass of its own over the text.
    """

    def __init__(self, names: tuple[str, ...], probes: tuple[tuple[str, str], ...] = ()) -> None:
        names_re = catalogue.name_pattern(names)
        parts = [f"(?:{r.pattern.replace('{names}', names_re)})" for r in catalogue.RULES]
        key = f'[{{,]"(?:[^"\\\\]*{names_re}[^"\\\\]*|[^"\\\\]*{catalogue.PASS_SUFFIX}|(?i:pass))":'
        own = ((COLUMNS, f'{key}\\{{"(?:{_COLUMN_ENTRY_KEYS})":'), (CONTAINER, f"{key}[\\[{{]"))
        parts += [f"(?P<p_{name}>{pattern})" for name, pattern in (*own, *probes)]
        self.regex = re2.compile("|".join(parts).encode(), _OPTIONS)
        # without names: RE2 keeps named groups as captures even with never_capture (``groups`` stays
        # above 0), so every match would be taken by a capturing engine, far slower per byte than the
        # automaton alone (docs/reliability.md, "Hostile strings")
        self.bounds = re2.compile(_NAMED_GROUP.sub("(?:", "|".join(parts)).encode(), _BOUNDS)
        suffix = r"(?:[_\-. ]pass|(?-i:[a-z0-9])Pass)$|^pass$"
        self.key_regex = re.compile(names_re.replace("(?i:", "(?:") + "|" + suffix, re.IGNORECASE)
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

    def scan(self, text: bytes) -> Scan:
        """Where the secrets of ``text`` (JSON) are, which strings are withheld, which probes occur.

        One left-to-right pass of the automaton without captures finds where matches are; each distinct
        match is then taken apart by the capturing pattern on just its own bytes (the same strings
        repeat in an event: a namespace in every column-lineage entry). A match longer than
        :data:`LONG_MATCH` is masked whole. Past :data:`FIELD_MATCHES` in one string,
        :data:`EVENT_MATCHES` in the event or :data:`MAX_SECRETS` different ones, the string is withheld
        whole and the pass goes on after it.
        """
        found: list[tuple[int, int]] = []
        withheld: list[tuple[int, int]] = []
        probes: set[str] = set()
        parts: dict[bytes, tuple[list[tuple[int, int]], str]] = {}
        state = [0, FIELD_MATCHES]  # matches so far, the count at which to look at the string's own
        pos, end = 0, len(text)
        while pos < end:
            resume = self._scan_from(text, pos, found, withheld, probes, parts, state)
            if resume is None:
                break
            pos = resume
        return Scan(found, withheld, probes)

    def _scan_from(
        self,
        text: bytes,
        pos: int,
        found: list[tuple[int, int]],
        withheld: list[tuple[int, int]],
        probes: set[str],
        parts: dict[bytes, tuple[list[tuple[int, int]], str]],
        state: list[int],
    ) -> int | None:
        """Scan from ``pos``; returns where to go on after a withheld string, None at the end."""
        for match in self.bounds.finditer(text, pos, len(text)):
            start, stop = match.span()
            state[0] += 1
            over = False
            if stop - start > LONG_MATCH:
                spans, probe = self._long(text, start, stop)
            else:
                piece = text[start:stop]
                known = parts.get(piece)
                if known is None:
                    if len(parts) >= MAX_SECRETS:
                        known, over = ([(0, len(piece))], ""), True
                    else:
                        known = parts[piece] = self._take_apart(piece)
                spans = [(start + a, start + b) for a, b in known[0]]
                probe = known[1]
            if probe:
                probes.add(probe)
            if not spans:
                continue
            if over or state[0] >= state[1]:
                first, last = _string_around(text, stop - 1)
                in_string = len(found) - bisect.bisect_left(found, (first, -1))
                if over or in_string + len(spans) > FIELD_MATCHES or state[0] > EVENT_MATCHES:
                    del found[len(found) - in_string :]
                    withheld.append((first, last))
                    return last + 1
                state[1] = min(state[0] + FIELD_MATCHES - in_string, EVENT_MATCHES + 1)
            found += spans
        return None

    def _long(self, text: bytes, start: int, stop: int) -> tuple[list[tuple[int, int]], str]:
        """A match longer than :data:`LONG_MATCH`, masked whole within its string (a value under a
        secret-looking key: the value), or taken apart when it is a probe."""
        if text[start] in b"{,":
            if text[stop - 1] == 0x22:  # a key's value: mask the value
                value = text.find(b'":"', start, stop) + 3
                return [(value, stop - 1)], ""
            spans, probe = self._take_apart(text[start:stop])
            return [(start + a, start + b) for a, b in spans], probe
        if text[start] == 0x22:  # context that is a quote (an opening or an escaped one) stays
            start += 1
        return [(start, stop)], ""

    def _spans_in(self, piece: bytes, pos: int, end: int) -> list[tuple[int, int]]:
        """Secret spans of context ``piece[pos:end]`` (short: no budget)."""
        found: list[tuple[int, int]] = []
        for match in self.bounds.finditer(piece, pos, end):
            start, stop = match.span()
            spans, _ = self._take_apart(piece[start:stop])
            found += [(start + a, start + b) for a, b in spans]
        return found

    def _take_apart(self, piece: bytes) -> tuple[list[tuple[int, int]], str]:
        """(secret spans within ``piece``, a whole match; the probe it is, or "")."""
        match = self.regex.fullmatch(piece)
        if match is None:  # cannot happen: the same pattern matched these bytes
            raise UncheckedEventError("a match could not be taken apart")
        spans: list[tuple[int, int]] = []
        for index in self.context:
            start, stop = match.span(index)
            if stop > start:
                spans += self._spans_in(piece, start, stop)
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


def _string_around(text: bytes, pos: int) -> tuple[int, int]:
    """(first byte, closing quote) of the content of the JSON string that holds byte ``pos``."""
    opening = pos + 1
    while True:
        opening = text.rfind(b'"', 0, opening)
        if opening < 0:
            return 0, len(text)
        before = opening
        while before > 0 and text[before - 1] == 0x5C:
            before -= 1
        if (opening - before) % 2 == 0:  # not an escaped quote
            break
    rest = _STRING_REST.match(text, opening + 1)
    return opening + 1, (rest.end() - 1 if rest is not None else len(text))


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


def _splice(
    text: bytes, spans: list[tuple[int, int]], withheld: list[tuple[int, int]] | None = None
) -> bytes:
    """``text`` with each span replaced by ``***`` and each withheld string's content by :data:`WITHHELD`."""
    edits = [(start, end, MASK) for start, end in spans]
    if withheld:
        edits += [(start, end, WITHHELD.format(size=end - start).encode()) for start, end in withheld]
        edits.sort()
    pieces, last = [], 0
    for start, end, replacement in edits:
        pieces += [text[last:start], replacement]
        last = end
    pieces.append(text[last:])
    return b"".join(pieces)


def _literal_hits(text: bytes, literals: Any, budget: int) -> Scan:
    """The registered secrets' spans in ``text``; past ``budget`` of them, each further string holding
    one is withheld whole."""
    hits: list[tuple[int, int]] = []
    withheld: list[tuple[int, int]] = []
    skip_to = 0
    for match in literals.finditer(text):
        start, stop = match.span()
        if start < skip_to:
            continue
        if len(hits) < budget:
            hits.append((start, stop))
            continue
        first, last = _string_around(text, stop - 1)
        while hits and hits[-1][0] >= first:
            hits.pop()
        withheld.append((first, last))
        skip_to = last + 1
    return Scan(hits, withheld, set())


def _scan(text: bytes, scan: Scanner, literals: Any) -> Redacted:
    """``text`` (JSON) with the catalogue's secrets and the registered ones replaced; how many; how many
    strings were withheld whole; the probes found."""
    spans, withheld, probes = scan.scan(text)
    if spans or withheld:
        text = _splice(text, spans, withheld)
    count = len(spans)
    held = len(withheld)
    if literals is not None:
        hits = _literal_hits(text, literals, max(0, EVENT_MATCHES - count))
        if hits.spans or hits.withheld:
            text = _splice(text, hits.spans, hits.withheld)
            count += len(hits.spans)
            held += len(hits.withheld)
    return Redacted(text, count, held, probes)


def redact_json(raw: bytes, probes: tuple[tuple[str, str], ...] = ()) -> Redacted:
    """The JSON text of an event with every secret replaced by ``***`` and every string that could not
    be checked within the budget by :data:`WITHHELD`; how many of each; which of ``probes`` occur.

    Raises :class:`UncheckedEventError` when the event cannot be checked.
    """
    scan, literals = scanner(probes), registered_secrets()
    done = _scan(raw, scan, literals)
    masked = 0
    if CONTAINER in done.probes:  # a secret-looking key holding an object or a list: mask it decoded
        data = orjson.loads(raw)
        masked = _mask_secret_keys(data, scan)
        raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        done = _scan(raw, scan, literals)._replace(probes=done.probes)
    if done.masked or done.withheld:
        try:
            orjson.loads(done.text)
        except orjson.JSONDecodeError:  # a registered secret ran over the JSON's structure
            data = orjson.loads(raw)
            count = redact_tree(data, scan)
            text = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
            return Redacted(text, count + masked, _count_withheld(data), done.probes)
    return done._replace(masked=done.masked + masked)


def _count_withheld(value: Any) -> int:
    if isinstance(value, str):
        return int(value.startswith(WITHHELD[:30]))
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return sum(_count_withheld(item) for item in items)


def scrub(text: str, scan: Scanner | None = None) -> str:
    """``text`` with every secret of the catalogue and every registered secret replaced by ``***`` (or
    :data:`WITHHELD` whole when it cannot be checked within the budget)."""
    scan = scan or scanner()
    encoded = orjson.dumps(text)
    clean, count, held, _ = _scan(encoded, scan, registered_secrets())
    if held:
        return WITHHELD.format(size=len(encoded) - 2)
    if not count:
        return text
    try:
        value = orjson.loads(clean)
    except orjson.JSONDecodeError:  # a registered secret ran over an escape: the catalogue, then Airflow's
        value = orjson.loads(_scan(encoded, scan, None).text)
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

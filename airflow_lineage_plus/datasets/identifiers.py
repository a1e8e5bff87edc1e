"""SQL identifiers: splitting ``a."B.c".d`` into parts, quoting them back, folding them like the engine."""

from __future__ import annotations

from typing import Literal

import attrs

from airflow_lineage_plus.datasets.identity import require_text
from airflow_lineage_plus.exceptions import DatasetNameError

#: How an engine folds unquoted identifiers (quoted ones always keep their case).
Fold = Literal["lower", "upper", "keep"]


@attrs.frozen
class Ident:
    """One SQL identifier: its text (quotes removed, ``""`` unescaped) and whether it was quoted."""

    value: str
    quoted: bool

    def canonical(self) -> str:
        """SQL text for the identifier: unquoted lower-cased, quoted kept in quotes (``""`` escaped)."""
        if self.quoted:
            return '"' + self.value.replace('"', '""') + '"'
        return self.value.lower()

    def folded(self, fold: Fold) -> str:
        """The identifier as OpenLineage names it: quotes removed, unquoted parts folded."""
        if self.quoted or fold == "keep":
            return self.value
        return self.value.lower() if fold == "lower" else self.value.upper()


def _quoted_at(text: str, start: int, field: str) -> tuple[Ident, int]:
    """The quoted identifier opening at ``text[start]`` and the index just past its closing quote."""
    j, buf, n = start + 1, [], len(text)
    while True:
        if j >= n:
            raise DatasetNameError(f"{field} {text!r} has an unterminated quote: close the quoted identifier")
        if text[j] == '"':
            if j + 1 < n and text[j + 1] == '"':
                buf.append('"')
                j += 2
                continue
            break
        buf.append(text[j])
        j += 1
    value = "".join(buf)
    if not value:
        raise DatasetNameError(f"{field} {text!r} has an empty quoted identifier '\"\"'")
    return Ident(value, True), j + 1


def _unquoted_at(text: str, start: int, field: str) -> tuple[Ident, int]:
    """The unquoted identifier starting at ``text[start]`` and the index of the dot (or end) after it."""
    j = text.find(".", start)
    end = len(text) if j == -1 else j
    value = text[start:end].strip()
    if not value:
        raise DatasetNameError(
            f"{field} {text!r} has an empty part: write parts separated by single dots (schema.table)"
        )
    if any(ch.isspace() for ch in value) or '"' in value:
        raise DatasetNameError(
            f"{field} part {value!r} contains whitespace or a stray quote: "
            f'quote it ("{value}") if the name really has them'
        )
    return Ident(value, False), end


def split_identifier(text: str, field: str) -> list[Ident]:
    """Split ``a."B.c".d`` into identifiers, honouring double quotes (``""`` escapes a quote)."""
    parts: list[Ident] = []
    i, n = 0, len(text)
    while True:
        part, i = _quoted_at(text, i, field) if i < n and text[i] == '"' else _unquoted_at(text, i, field)
        parts.append(part)
        if i >= n:
            return parts
        if text[i] != ".":
            raise DatasetNameError(f"{field} {text!r}: expected '.' after a quoted identifier")
        i += 1
        if i >= n:
            raise DatasetNameError(f"{field} {text!r} ends with '.': remove it")


def single_ident(field: str, value: str) -> Ident:
    """The one identifier ``value`` names; DatasetNameError for a dotted (multi-part) value."""
    parts = split_identifier(require_text(value, field), field)
    if len(parts) != 1:
        raise DatasetNameError(
            f"{field} {value!r} has {len(parts)} dotted parts; pass one name per argument "
            f"(quote it if the dot is part of the name)"
        )
    return parts[0]


def join_parts(fields: list[tuple[str, str]], fold: Fold) -> str:
    """A dotted name from one identifier per (field, value), each folded as the engine folds it."""
    return ".".join(single_ident(field, value).folded(fold) for field, value in fields)

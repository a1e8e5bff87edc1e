"""How two column types compare, for data contracts: the same, widened, narrowed, or changed.

SQL spellings are normalised first (``INT`` and ``INT4`` are ``INTEGER``, ``STRING`` and ``TEXT`` are
``VARCHAR``, ``NUMERIC`` is ``DECIMAL`` ...). Within a family a type is *widened* when every value of the
old one fits the new one (``INTEGER`` -> ``BIGINT``, ``DECIMAL(12,2)`` -> ``DECIMAL(14,2)``,
``VARCHAR(64)`` -> ``VARCHAR``, ``DATE`` -> ``TIMESTAMP``, an integer -> a wide enough ``DECIMAL`` or a
float), *narrowed* when some do not; across families it is *changed*. Unknown types compare by name.
"""

from __future__ import annotations

import re

SAME, WIDENED, NARROWED, CHANGED = "SAME", "WIDENED", "NARROWED", "CHANGED"

_ALIASES = {
    "INT": "INTEGER",
    "INT4": "INTEGER",
    "SIGNED": "INTEGER",
    "INT8": "BIGINT",
    "LONG": "BIGINT",
    "INT2": "SMALLINT",
    "SHORT": "SMALLINT",
    "INT1": "TINYINT",
    "BYTE": "TINYINT",
    "INT128": "HUGEINT",
    "STRING": "VARCHAR",
    "TEXT": "VARCHAR",
    "CHARACTER VARYING": "VARCHAR",
    "CHAR": "VARCHAR",
    "BPCHAR": "VARCHAR",
    "NUMERIC": "DECIMAL",
    "NUMBER": "DECIMAL",
    "BOOL": "BOOLEAN",
    "FLOAT4": "REAL",
    "FLOAT": "REAL",
    "FLOAT8": "DOUBLE",
    "DOUBLE PRECISION": "DOUBLE",
    "FLOAT64": "DOUBLE",
    "DATETIME": "TIMESTAMP",
    "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP",
    "TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ",
}
#: integer types by width, and the decimal digits each holds
_INTEGERS = {"TINYINT": (1, 3), "SMALLINT": (2, 5), "INTEGER": (3, 10), "BIGINT": (4, 19), "HUGEINT": (5, 39)}
_FLOATS = {"REAL": 1, "DOUBLE": 2}
_TIMES = {"DATE": 1, "TIMESTAMP": 2}
_PARAMS = re.compile(r"^(?P<base>[A-Z0-9_ ]+?)\s*(?:\((?P<args>[0-9 ,]*)\))?$")


def normalise(type_name: str) -> tuple[str, tuple[int, ...]]:
    """(base type, parameters) of a type as written: ``numeric(12, 2)`` -> (``DECIMAL``, (12, 2))."""
    text = re.sub(r"\s+", " ", type_name.strip().upper())
    match = _PARAMS.match(text)
    if match is None:
        return text, ()
    base = _ALIASES.get(match["base"].strip(), match["base"].strip())
    args = tuple(int(a) for a in (match["args"] or "").replace(" ", "").split(",") if a)
    return base, args


def _rank(a: int, b: int) -> str:
    return SAME if a == b else WIDENED if b > a else NARROWED


def _decimal(args: tuple[int, ...]) -> tuple[int, int]:
    """(integer digits, scale) of DECIMAL(p, s); a bare DECIMAL is DECIMAL(18, 3)."""
    if not args:
        return 18 - 3, 3
    precision, scale = args[0], (args[1] if len(args) > 1 else 0)
    return precision - scale, scale


def _decimals(old: tuple[int, ...], new: tuple[int, ...]) -> str:
    (old_int, old_scale), (new_int, new_scale) = _decimal(old), _decimal(new)
    if (old_int, old_scale) == (new_int, new_scale):
        return SAME
    return WIDENED if new_int >= old_int and new_scale >= old_scale else NARROWED


def _lengths(old: tuple[int, ...], new: tuple[int, ...]) -> str:
    if old == new:
        return SAME
    if not new:
        return WIDENED  # unbounded holds every bounded string
    if not old:
        return NARROWED
    return _rank(old[0], new[0])


def compare(declared: str, actual: str) -> str:
    """How ``actual`` compares with ``declared``: SAME, WIDENED, NARROWED or CHANGED."""
    (old, old_args), (new, new_args) = normalise(declared), normalise(actual)
    if old == new:
        if old == "DECIMAL":
            return _decimals(old_args, new_args)
        if old == "VARCHAR":
            return _lengths(old_args, new_args)
        return SAME if old_args == new_args or not (old_args and new_args) else CHANGED
    for family in (_FLOATS, _TIMES):
        if old in family and new in family:
            return _rank(family[old], family[new])
    if old in _INTEGERS:
        if new in _INTEGERS:
            return _rank(_INTEGERS[old][0], _INTEGERS[new][0])
        if new == "DECIMAL":
            return WIDENED if _decimal(new_args)[0] >= _INTEGERS[old][1] else NARROWED
        if new in _FLOATS:
            return WIDENED
    if new in _INTEGERS and old in {"DECIMAL", *_FLOATS}:
        return NARROWED
    return CHANGED

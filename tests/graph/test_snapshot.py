"""The index file's run tables: built at once from millions of pairs, probed like the one-by-one table."""

from __future__ import annotations

import random
from array import array

import pytest

from airflow_lineage_plus.graph.snapshot import RunTable, home_slot


def _lookup(table: RunTable, value: int) -> list[int]:
    """What a reader's probe finds (linear probing from the home slot until an empty one)."""
    size, found = len(table.hashes), []
    slot = home_slot(value, size)
    while table.hashes[slot]:
        if table.hashes[slot] == value:
            found.append(table.jobs[slot])
        slot = (slot + 1) % size
    return sorted(found)


def _pairs(count: int, seed: int) -> list[tuple[int, int]]:
    rnd = random.Random(seed)
    pairs = [(rnd.getrandbits(64) or 1, rnd.randrange(50)) for _ in range(count)]
    pairs += pairs[: count // 5]  # the same pair again (a run folded in two parts)
    pairs += [(value, 51 + i) for i, (value, _) in enumerate(pairs[:2])]  # a hash shared by two jobs
    pairs += [(77, 60), (77, 61), (77, 60)]  # ... and given twice for one, with the other in between
    size = RunTable.slots_for(len(pairs))
    # hashes whose home is the last slot: they run past the end and wrap to the start
    pairs += [(((size - 1) << (65 - size.bit_length())) + k, 9) for k in range(1, 6)]
    return pairs


@pytest.mark.parametrize("count", [0, 1, 40, 5000])
def test_a_table_built_at_once_finds_what_one_built_pair_by_pair_finds(count: int) -> None:
    pairs = _pairs(count, seed=count)
    at_once = RunTable.empty(0)
    at_once.add_all(array("Q", [h for h, _ in pairs]), array("I", [j for _, j in pairs]))
    one_by_one = RunTable.empty(len(pairs))
    for value, job in pairs:
        one_by_one.add(value, job)
    assert at_once.count == one_by_one.count == len(set(pairs))
    assert 10 * at_once.count <= 7 * len(at_once.hashes)  # no fuller than add keeps a table
    for value, _ in pairs:
        assert (
            _lookup(at_once, value)
            == _lookup(one_by_one, value)
            == sorted({job for h, job in pairs if h == value})
        )


def test_pairs_added_to_a_table_that_has_some_go_in_one_by_one() -> None:
    pairs = _pairs(300, seed=3)
    table = RunTable.empty(0)
    table.add_all(array("Q", [h for h, _ in pairs[:100]]), array("I", [j for _, j in pairs[:100]]))
    table.add_all(array("Q", [h for h, _ in pairs[100:]]), array("I", [j for _, j in pairs[100:]]))
    assert table.count == len(set(pairs))
    for value, _ in pairs:
        assert _lookup(table, value) == sorted({job for h, job in pairs if h == value})

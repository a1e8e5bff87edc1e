"""Simulated operational systems: a CRM and an order service, deterministic for a given date.

The records look like what the real APIs return (ids, e-mails, ISO timestamps, money as decimals, a few
missing values), so the pipelines, the quality figures and the lineage behave as they would in production.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

CONTACT_COUNT = 60
ACCOUNT_COUNT = 12
_FIRST = ["Ada", "Grace", "Alan", "Linus", "Margaret", "Ken", "Barbara", "Edsger", "Frances", "Dennis"]
_LAST = ["Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Thompson", "Liskov", "Dijkstra", "Allen"]
_STATUSES = ["completed"] * 8 + ["refunded", "cancelled"]


def contact_id(number: int) -> str:
    return f"C-{number:05d}"


def crm_contacts(snapshot_date: date) -> list[dict[str, Any]]:
    """Every CRM contact as of ``snapshot_date``: the same people every day, a few fields missing."""
    rng = random.Random(f"crm-{snapshot_date.isoformat()}")
    contacts = []
    for number in range(1, CONTACT_COUNT + 1):
        first, last = _FIRST[number % len(_FIRST)], _LAST[number % len(_LAST)]
        created = datetime(2023, 1, 1, tzinfo=timezone.utc) + timedelta(days=number * 5, minutes=number * 7)
        revenue = None if number % 9 == 0 else Decimal(rng.randrange(20_000, 5_000_000_00)) / 100
        contacts.append(
            {
                "contact_id": contact_id(number),
                "email": None if number % 13 == 0 else f"{first}.{last}{number}@example.com".lower(),
                "account_id": f"A-{(number % ACCOUNT_COUNT) + 1:03d}",
                "first_name": first,
                "last_name": last,
                "created_at": created.isoformat(),
                "is_active": number % 7 != 0,
                "annual_revenue_usd": str(revenue) if revenue is not None else None,
            }
        )
    return contacts


def orders(order_date: date, count: int) -> list[dict[str, Any]]:
    """``count`` orders placed on ``order_date`` by CRM contacts."""
    rng = random.Random(f"orders-{order_date.isoformat()}")
    start = datetime(order_date.year, order_date.month, order_date.day, tzinfo=timezone.utc)
    placed = []
    for number in range(1, count + 1):
        amount = Decimal(rng.randrange(5_00, 900_00)) / 100
        placed.append(
            {
                "order_id": f"O-{order_date:%Y%m%d}-{number:04d}",
                "customer_id": contact_id(rng.randrange(1, CONTACT_COUNT + 1)),
                "ordered_at": (start + timedelta(seconds=rng.randrange(0, 86_400))).isoformat(),
                "status": rng.choice(_STATUSES),
                "total_amount_usd": str(amount),
                "coupon_code": rng.choice([None, None, None, "WELCOME10", "SPRING"]),
            }
        )
    return placed

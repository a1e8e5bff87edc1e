"""Marquez's OpenAPI spec and API test resources, at one pinned commit, found through ``spec_files.py``.

Names are those of ``../shared/spec/marquez``: ``openapi.yml`` at the top, the examples in ``examples/``
named after their path under ``api/src/test/resources`` with ``/`` written ``__``. A downloaded file must
have the SHA-256 pinned here (the same bytes as the shared copy), so every place gives the same files.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from tests.support.spec_files import SpecPlaces, download, write_atomically

COMMIT = "a89b89cad27f87c90dd964c40dae8dfb3f64031f"
RAW = f"https://raw.githubusercontent.com/MarquezProject/marquez/{COMMIT}"
PLACES = SpecPlaces.named(
    "marquez",
    "Marquez's OpenAPI spec and API examples",
    "MARQUEZ_SPEC_DIR",
    f"{RAW}/ (spec/openapi.yml; api/src/test/resources/... as examples/<dir>__<file>.json)",
)
_PINNED = """
openapi.yml 409a712389219e05c559cee949492be7d15cdcda6ea38b7bd1095d15bd59e373
lineage__node.json 4e78abf73099692ce9321a3bc6733732e3a6ac3f0bbcd393aee2b46c6a7b2681
column_lineage__node.json 010338090c15a4eebadd434e2a8fb1b0ee19163b625b4891098e3d3d2d3354d0
open_lineage__event_additional_facet.json 58339040d4f564f0b50a3459c631bbe37fc156f45c60ba9893551fa04fdc6720
open_lineage__event_dataset_event.json c48699baa46af60bedc63d696d72074fe0f623f46797481331e85074e107d9c0
open_lineage__event_full.json a10abd08f878f66c744d5261d21b7f48fd648abeb2c8de56bdd300a77af39ebc
open_lineage__event_job_event.json 7a72b05a0a73ebbe31041c4794bb2ee3c2d69b1ec70978bf84cd5781961da242
open_lineage__event_large.json 407c3094f53c59fa52c3798f5226f19857f89b8a3a016f7b49e0d6de988c097f
open_lineage__event_namespace_naming.json 46abb2c79bf4917cabd6733e007e1fc4ddf6bc6954461d6f482629df481c9d6c
open_lineage__event_required_nanoseconds.json bf3a426422fd64cd06fcd9facc4782f0f9d53c37870f340e74034aba75346ef8
open_lineage__event_required_no_timezone.json 434432a526d228c5fe974723f55309f5cae0c9e88d2a20047375ec401b81a620
open_lineage__event_required_only.json faeb93ab5022430314de9a39b2fcf4c6d86af6cf8bec1e1dfc1fe9048ec865a2
open_lineage__event_simple.json 7910d46f160f0f65eb089e61976631b6a6eca800acb1d333c17ee2d7873ce7e0
open_lineage__event_unicode.json 1989ce50f60826846f9aaf6ae17faea659cf28fdf1f4b395d6831bb6f97781f1
open_lineage__event_without_schema_url.json 858797ed7cf69b20c90ad09c05304589294541a7dde5f46a00b2477cbcf6c367
open_lineage__listener__1.json 8bbcac43ac03e55b36916cc8242d879e21740b591e733f4dae5687b5ecc0266e
open_lineage__listener__2.json d2b8e48f68aa90fb96d0bc656c08f52f5ca3ea96458607ff408b494b07627bae
open_lineage__null_nominal_end_time.json 18dbb247bf95fb8d23cec6b2f869bfd4ee090a8aa1af6f43d10b578b60ea8cda
apples__1_pick_apples.json 0f2c25d7fcbb6befcdae3188f7c77d3e4262361c987af52a6ad4ba1d093eaefd
apples__2_apple_filling.json 28519f7ce3411aae87918b899db19528af508989e189809e8403723a13b1c9f3
apples__3_apple_cider.json f9696e7d7397a2fa1b383ff8875bf7cc9013c0dadaa432ca95f8c9c59232321c
apples__5_apple_vinegar.json 0c1c0fd45ca2750ce3edea66ee3e3b8b4a2eeff7c2b79b9255b1bcc421cfe716
apples__6_apple_pie.json fdb623aa93675da11ff3b64b2f0812a0c6649fb7b4e79cf30fe0d565f6f90b09
apples__7_pick_different_apples.json 4a8472b1b5d65b1b4078bc4f6dab8bcdea0c0e7c79d73d60d7a323a85b3af537
apples__8_apple_filling.json e21b2ad9895a433836140378fe075c080b258e266460bcc07d2dbfac0ac0043b
apples__9_apple_pie.json 5b8fdbd57ef7a334af9dcebbd3024aa50071c040d71abce1cda47aebafbfa5a1
"""
#: file name -> SHA-256 of its bytes at COMMIT
SHA256 = {
    (name if name == "openapi.yml" else f"examples/{name}"): digest
    for name, digest in (line.split() for line in _PINNED.strip().splitlines())
}


def upstream_path(name: str) -> str:
    """Where a file of this spec is in the Marquez repository."""
    if name == "openapi.yml":
        return "spec/openapi.yml"
    stem = name.removeprefix("examples/")
    return "api/src/test/resources/" + stem.replace("__", "/")


@cache
def spec_file(name: str, raw_base: str = RAW, places: SpecPlaces = PLACES) -> Path:
    """The local path of one pinned file (``openapi.yml``, ``examples/<name>.json``)."""
    digest = SHA256[name]
    for folder in places.local_dirs():
        if (folder / name).is_file():
            return folder / name
    url = f"{raw_base}/{upstream_path(name)}"
    try:
        data = download(url)
    except OSError as exc:
        raise places.unavailable(name, f"downloading {url} failed: {exc}") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise places.unavailable(name, f"{url} did not have the pinned SHA-256 {digest}")
    write_atomically(places.cache / name, data)
    return places.cache / name


def example_files(*prefixes: str) -> list[Path]:
    """The pinned example files whose names start with one of ``prefixes``, sorted by name."""
    names = sorted(n for n in SHA256 if n.startswith(tuple(f"examples/{p}" for p in prefixes)))
    return [spec_file(n) for n in names]


def require_spec() -> None:
    """Find (or download) every pinned file; raises ``SpecUnavailableError`` naming the three ways."""
    for name in SHA256:
        spec_file(name)

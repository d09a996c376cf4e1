"""Seeds derived from one root seed and stable ids.

One root seed per run is printed and recorded; every cell, trial and racer seed is a pure function
of it and of stable names, so any trial can be re-run alone with the same randomness.
"""

from __future__ import annotations

import hashlib


def derive(root: int, *parts: object) -> int:
    """A 63-bit seed from the root seed and a path of stable ids."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(int(root)).encode())
    for p in parts:
        h.update(b"\x1f")
        h.update(str(p).encode())
    return int.from_bytes(h.digest(), "big") >> 1

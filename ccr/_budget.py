"""The store's byte budget: the argument, else ``COMPACTOR_CCR_MAX_BYTES``, else 512 MiB.

Apart from ``ccr.store`` so that a command reading a store file directly
(``ccr stats``) resolves the budget without loading the backends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ccr.errors import StoreConfigError

__all__ = ["DEFAULT_MAX_BYTES", "MAX_BUDGET_BYTES", "MAX_BYTES_ENV", "resolve_max_bytes"]

MAX_BUDGET_BYTES = 1 << 47
"""The largest byte budget accepted (128 TiB, below SQLite's largest file)."""

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
"""Payload budget when nothing else is configured: 512 MiB."""
MAX_BYTES_ENV = "COMPACTOR_CCR_MAX_BYTES"


def resolve_max_bytes(max_bytes: int | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The budget in bytes: the argument, else ``COMPACTOR_CCR_MAX_BYTES``, else 512 MiB.

    Raises:
        StoreConfigError: the argument or the variable is not a positive integer.
    """
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise StoreConfigError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        if max_bytes > MAX_BUDGET_BYTES:
            raise StoreConfigError(
                f"max_bytes {max_bytes:,} is over the largest budget accepted ({MAX_BUDGET_BYTES:,})"
            )
        return max_bytes
    env = os.environ if environ is None else environ
    raw = env.get(MAX_BYTES_ENV)
    if raw is None:
        return DEFAULT_MAX_BYTES
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or int(text) <= 0:
        raise StoreConfigError(f"{MAX_BYTES_ENV} must be a positive integer of bytes, got {raw!r}")
    if len(text) > 20 or int(text) > MAX_BUDGET_BYTES:
        raise StoreConfigError(
            f"{MAX_BYTES_ENV}={raw!r} is over the largest budget accepted ({MAX_BUDGET_BYTES:,} bytes)"
        )
    return int(text)

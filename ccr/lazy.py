"""Lazy package exports: a public name's module is imported on first use.

The packages (``compactor``, ``compactor.summarizers``, ``attachments``,
``ccr``, ``compactor.memory``) list their public names in ``_EXPORTS`` (name -> the
module that defines it) and end their ``__init__`` with::

    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

so that importing a package costs nothing until a name is used: a command
that needs one store function does not load the pipeline, jinja2 or the
tokenizer. Type checkers see the names through ``if TYPE_CHECKING:`` imports.
It lives in ``ccr``, the lowest package, so that every package can use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for ``exports``."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups find it directly
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__

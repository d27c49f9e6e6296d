"""The jinja2 environment for the compactor package's own templates."""

from __future__ import annotations

import functools
from typing import Any

import jinja2

__all__ = ["render"]


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("compactor", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, **context: Any) -> str:
    """Render ``compactor/templates/<template>`` with ``context``."""
    return _environment().get_template(template).render(**context).strip() + "\n"

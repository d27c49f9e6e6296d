"""Rendering compactor's own templates (``compactor/templates``).

The environments every package shares (missing variables are errors,
nothing escaped for model text, HTML escaped for pages) are
``ccr.templating``'s; they are re-exported here.
"""

from __future__ import annotations

from typing import Any

from ccr.templating import environment, html_environment, render_text

__all__ = ["environment", "html_environment", "render", "render_html"]


def render_html(template: str, package: str = "compactor", **context: Any) -> str:
    """Render ``<package>/templates/<template>`` as HTML (values escaped)."""
    return html_environment(package).get_template(template).render(**context)


def render(template: str, **context: Any) -> str:
    """Render ``compactor/templates/<template>`` with ``context``."""
    return render_text("compactor", template, **context)

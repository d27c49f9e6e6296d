"""The jinja2 environments for the packages' own templates.

Every package keeps its templates in ``<package>/templates`` and renders them
with the same options: missing variables are errors, nothing is escaped (the
output is plain text for a model, not HTML), and block tags leave no stray
whitespace behind. HTML pages for people (reports) use ``html_environment``,
which escapes every value. A template is loaded once per process
(``auto_reload`` off): the files are the installed package's, and checking
each one's modification time at every render was a measurable share of a
compaction. jinja2 is imported with this module: import it
where something is rendered, not at a package's start.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2

__all__ = ["environment", "html_environment", "render_text"]


@functools.cache
def environment(package: str) -> jinja2.Environment:
    """The environment that loads ``<package>/templates``, made once per package."""
    return _environment(package, autoescape=False)


@functools.cache
def html_environment(package: str) -> jinja2.Environment:
    """Like ``environment``, but every value is HTML-escaped: for pages a person opens."""
    return _environment(package, autoescape=True)


def _environment(package: str, *, autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )


def render_text(package: str, template: str, **context: Any) -> str:
    """Render ``<package>/templates/<template>`` with ``context``, trimmed, ending in one newline."""
    return environment(package).get_template(template).render(**context).strip() + "\n"

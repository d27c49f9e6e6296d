"""The attachments package's errors.

::

    CompactorError (ccr.root_errors, the project's root)
    └── AttachmentsError            root of the attachments package
        ├── TailNotStored           the store answered a cut tail with an unexpected handle
        └── WatchError              the staleness watcher could not start

A store that refuses a cut tail (``ccr.BudgetExceeded``, an I/O error) is not
wrapped: its own error propagates unchanged so that the pipeline fails closed
with the store's error id.
"""

from __future__ import annotations

from ccr.root_errors import CompactorError, CompactorRuntimeError

__all__ = ["AttachmentsError", "TailNotStored", "WatchError"]


class AttachmentsError(CompactorError):
    """Root of every error the attachments package raises."""

    error_id = "attachments_error"


class TailNotStored(AttachmentsError, CompactorRuntimeError):
    """A cut tail could not be named: the store's handle did not fit the rendered budget."""

    error_id = "attachment_tail_not_stored"


class WatchError(AttachmentsError, CompactorRuntimeError):
    """The staleness watcher could not start."""

    error_id = "attachment_watch_failed"

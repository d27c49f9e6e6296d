"""The SQLite kit: what every database file of the project is opened with.

Shared by the recovery store (``ccr._sqlite``) and the memory database
(``compactor.memory``), each passing its own ``Schema``:

- ``ccr.sqlite_kit.files``: the file rules, standard library only (a private
  file in a private folder, symlinks and non-regular files refused, the
  opened file checked to be the validated one);
- ``ccr.sqlite_kit.migrations``: a schema's identity and numbered
  migrations, the busy retry, and the write transaction;
- ``ccr.sqlite_kit.connect``: opening for writing (WAL, ``busy_timeout``
  5000 ms, durable commits, migrated) and for reading only, also on
  read-only media.

Nothing is imported here, so that the file rules load without ``sqlite3``.
Errors are the shared store concepts (``ccr.root_errors``: ``StoreError``,
``UnsafeStorePath``, ``NotAStore``), the same classes for every caller; the
messages name the schema's kind of file, so nothing needs translating.
"""

"""The recovery store's schema: its numbered migrations, run by the SQLite kit (``ccr.sqlite_kit``).

A file is a ccr store when it holds ``schema_migrations`` and ``blobs``.
Migrations are applied in order, each in one transaction with the row that
records it; a migration once released never changes (a file on disk records
that it ran), so a new table or column is a new numbered migration.
"""

from __future__ import annotations

from ccr.sqlite_kit.migrations import Migration, Schema

__all__ = ["MIGRATIONS", "SCHEMA"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        name="blobs, typed objects and usage totals",
        statements=(
            """CREATE TABLE blobs (
                handle TEXT PRIMARY KEY,
                content_type TEXT NOT NULL,
                producer TEXT NOT NULL,
                tokens_before INTEGER,
                tokens_after INTEGER,
                metadata TEXT,
                created_at TEXT NOT NULL,
                size INTEGER NOT NULL,
                data BLOB NOT NULL
            )""",
            """CREATE TABLE objects (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                session_id TEXT NOT NULL,
                source TEXT NOT NULL,
                repo_state TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                currentness TEXT NOT NULL DEFAULT 'current',
                lifecycle TEXT NOT NULL DEFAULT 'hot',
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                size INTEGER NOT NULL,
                content BLOB NOT NULL
            )""",
            """CREATE TABLE usage (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                payload_bytes INTEGER NOT NULL,
                entries INTEGER NOT NULL,
                objects INTEGER NOT NULL,
                tokens_before INTEGER NOT NULL,
                tokens_after INTEGER NOT NULL,
                tokens_saved INTEGER NOT NULL
            )""",
            "INSERT INTO usage VALUES (1, 0, 0, 0, 0, 0, 0)",
            """CREATE TRIGGER blobs_usage AFTER INSERT ON blobs BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes + NEW.size,
                    entries = entries + 1,
                    tokens_before = tokens_before + coalesce(NEW.tokens_before, 0),
                    tokens_after = tokens_after + coalesce(NEW.tokens_after, 0),
                    tokens_saved = tokens_saved + CASE
                        WHEN NEW.tokens_before IS NULL OR NEW.tokens_after IS NULL THEN 0
                        ELSE NEW.tokens_before - NEW.tokens_after END
                WHERE id = 1;
            END""",
            """CREATE TRIGGER objects_usage AFTER INSERT ON objects BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes + NEW.size,
                    objects = objects + 1
                WHERE id = 1;
            END""",
        ),
    ),
    Migration(
        version=2,
        name="session and kind columns for listing; usage follows deletes and heals",
        statements=(
            # Virtual columns read what producers already record in the metadata
            # (the hooks pass session_id, every span its kind): nothing to backfill,
            # and a record's stored row keeps the shape version 1 gave it.
            "ALTER TABLE blobs ADD COLUMN session_id TEXT"
            " GENERATED ALWAYS AS (json_extract(metadata, '$.session_id')) VIRTUAL",
            "ALTER TABLE blobs ADD COLUMN kind TEXT GENERATED ALWAYS AS (json_extract(metadata, '$.kind')) VIRTUAL",
            "CREATE INDEX blobs_session ON blobs (session_id)",
            "CREATE INDEX blobs_created ON blobs (created_at)",
            """CREATE TRIGGER blobs_usage_delete AFTER DELETE ON blobs BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes - OLD.size,
                    entries = entries - 1,
                    tokens_before = tokens_before - coalesce(OLD.tokens_before, 0),
                    tokens_after = tokens_after - coalesce(OLD.tokens_after, 0),
                    tokens_saved = tokens_saved - CASE
                        WHEN OLD.tokens_before IS NULL OR OLD.tokens_after IS NULL THEN 0
                        ELSE OLD.tokens_before - OLD.tokens_after END
                WHERE id = 1;
            END""",
            """CREATE TRIGGER blobs_usage_heal AFTER UPDATE OF size ON blobs BEGIN
                UPDATE usage SET payload_bytes = payload_bytes + NEW.size - OLD.size WHERE id = 1;
            END""",
            """CREATE TRIGGER objects_usage_delete AFTER DELETE ON objects BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes - OLD.size,
                    objects = objects - 1
                WHERE id = 1;
            END""",
        ),
    ),
    Migration(
        version=3,
        name="a total of records ever stored, compared with the count kept beside the file (ccr._acknowledged)",
        statements=(
            """CREATE TABLE acknowledged (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                stored INTEGER NOT NULL
            )""",
            "INSERT INTO acknowledged SELECT 1, entries + objects FROM usage WHERE id = 1",
            """CREATE TRIGGER blobs_acknowledged AFTER INSERT ON blobs BEGIN
                UPDATE acknowledged SET stored = stored + 1 WHERE id = 1;
            END""",
            """CREATE TRIGGER objects_acknowledged AFTER INSERT ON objects BEGIN
                UPDATE acknowledged SET stored = stored + 1 WHERE id = 1;
            END""",
        ),
    ),
)

SCHEMA = Schema(noun="store", kind="ccr store", marker="blobs", migrations=MIGRATIONS)
"""The recovery store, as the kit opens it."""

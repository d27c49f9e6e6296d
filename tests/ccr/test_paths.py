"""The store file is private, and a symlinked or non-regular path is refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ccr import NotAStore, UnsafeStorePath, open_store
from ccr.paths import check_identity, prepare_store_file


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_store_file_and_its_sidecars_are_0600_and_its_new_directory_0700(db_path: Path) -> None:
    with open_store(db_path) as store:
        store.put(b"secret")
        sidecars = [db_path.with_name(db_path.name + s) for s in ("-wal", "-shm")]
        assert all(p.exists() for p in sidecars)
        assert _mode(db_path) == 0o600
        assert [_mode(p) for p in sidecars] == [0o600, 0o600]
    assert _mode(db_path.parent) == 0o700


def test_new_store_is_private_even_under_a_permissive_umask(db_path: Path) -> None:
    old = os.umask(0)
    try:
        with open_store(db_path) as store:
            store.put(b"secret")
            assert _mode(db_path.with_name("ccr.db-wal")) == 0o600
            assert _mode(db_path.with_name("ccr.db-shm")) == 0o600
    finally:
        os.umask(old)
    assert _mode(db_path) == 0o600
    assert _mode(db_path.parent) == 0o700


def test_an_existing_world_readable_store_file_is_tightened(db_path: Path) -> None:
    db_path.parent.mkdir()
    db_path.touch()
    db_path.chmod(0o644)
    open_store(db_path).close()
    assert _mode(db_path) == 0o600


def test_a_file_that_is_not_sqlite_is_refused_and_keeps_its_bytes_and_mode(db_path: Path) -> None:
    db_path.parent.mkdir()
    db_path.write_bytes(b"not a database\n")
    db_path.chmod(0o644)
    with pytest.raises(NotAStore):
        open_store(db_path)
    assert db_path.read_bytes() == b"not a database\n"
    assert _mode(db_path) == 0o644


def test_symlinked_store_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    link = tmp_path / "ccr.db"
    link.symlink_to(target)
    with pytest.raises(UnsafeStorePath):
        open_store(link)
    assert target.read_bytes() == b""


def test_dangling_symlink_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    link = tmp_path / "ccr.db"
    link.symlink_to(tmp_path / "missing.db")
    with pytest.raises(UnsafeStorePath):
        open_store(link)
    assert not (tmp_path / "missing.db").exists()


def test_symlinked_sidecar_is_refused(db_path: Path, tmp_path: Path) -> None:
    db_path.parent.mkdir()
    (tmp_path / "planted").write_bytes(b"")
    db_path.with_name("ccr.db-wal").symlink_to(tmp_path / "planted")
    with pytest.raises(UnsafeStorePath):
        open_store(db_path)


def test_directory_at_the_store_path_is_refused(db_path: Path) -> None:
    db_path.mkdir(parents=True)
    with pytest.raises(UnsafeStorePath):
        open_store(db_path)


def test_fifo_at_the_store_path_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir()
    os.mkfifo(db_path)
    with pytest.raises(UnsafeStorePath):
        open_store(db_path)


def test_a_file_swapped_in_after_validation_is_detected(db_path: Path) -> None:
    identity = prepare_store_file(db_path)
    db_path.rename(db_path.with_name("validated.db"))
    db_path.write_bytes(b"")
    with pytest.raises(UnsafeStorePath):
        check_identity(db_path, identity)


def test_a_symlink_swapped_in_after_validation_is_detected(db_path: Path, tmp_path: Path) -> None:
    identity = prepare_store_file(db_path)
    db_path.unlink()
    db_path.symlink_to(tmp_path / "other.db")
    with pytest.raises(UnsafeStorePath):
        check_identity(db_path, identity)


def test_identity_check_accepts_the_validated_file(db_path: Path) -> None:
    identity = prepare_store_file(db_path)
    check_identity(db_path, identity)

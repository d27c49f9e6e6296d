"""``ccr.files``: reads that never block, writes that never destroy, in-process."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccr import open_store
from ccr.errors import OutputRefused
from ccr.files import (
    FileTooLarge,
    NotRegularFile,
    check_output,
    check_output_folder,
    open_regular,
    output_file,
    private_dir,
    read_regular,
    write_output,
)
from compactor.core.errors import UsageError


@pytest.fixture
def umask_000() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def a_store(tmp_path: Path) -> Path:
    path = tmp_path / "kept.db"
    store = open_store(path)
    store.put(b"kept")
    store.close()
    return path


def test_a_fifo_is_refused_at_once_instead_of_blocking_the_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="FIFO"):
        open_regular(fifo)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_instead_of_read_forever(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} is not on this system")
    with pytest.raises(NotRegularFile, match="character device"):
        open_regular(device)


def test_a_folder_is_refused_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)


def test_a_file_over_the_bound_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge, match="101 bytes, over the 100-byte limit"):
        read_regular(path, max_bytes=100)
    assert read_regular(path, max_bytes=101) == b"x" * 101


def test_an_sqlite_file_is_refused_whatever_its_name(a_store: Path, tmp_path: Path) -> None:
    disguised = tmp_path / "notes.txt"
    disguised.write_bytes(a_store.read_bytes())
    with pytest.raises(OutputRefused, match="SQLite database"):
        check_output(disguised)


def test_the_refusal_is_a_usage_error_with_exit_2(a_store: Path) -> None:
    with pytest.raises(UsageError) as caught:
        check_output(a_store)
    assert caught.value.error_id == "output_refused" and caught.value.exit_code == 2


def test_a_sidecar_name_of_a_database_is_refused_even_before_it_exists(a_store: Path) -> None:
    for suffix in ("-wal", "-shm", "-journal"):
        with pytest.raises(OutputRefused, match="sidecar"):
            check_output(a_store.with_name(a_store.name + suffix))


def test_the_configured_store_and_memory_database_are_refused_before_they_exist(compactor_home: Path) -> None:
    for name in ("ccr.db", "memory.db"):
        assert not (compactor_home / name).exists()
        with pytest.raises(OutputRefused, match="store or memory database"):
            check_output(compactor_home / name)


def test_a_memory_database_named_by_the_environment_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTOR_MEMORY_DB", str(tmp_path / "elsewhere" / "mem.db"))
    with pytest.raises(OutputRefused):
        check_output(tmp_path / "elsewhere" / "mem.db")


def test_a_link_to_a_database_is_refused(a_store: Path, tmp_path: Path) -> None:
    link = tmp_path / "out.jsonl"
    link.symlink_to(a_store)
    with pytest.raises(OutputRefused, match="SQLite"):
        check_output(link)


def test_an_input_is_refused_through_a_hard_link(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    alias = tmp_path / "alias.jsonl"
    os.link(source, alias)
    with pytest.raises(OutputRefused, match="input of this command"):
        check_output(alias, inputs=[source])


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder"])
def test_anything_but_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    else:
        path.mkdir()
    with pytest.raises(OutputRefused, match="not a regular file"):
        check_output(path)


def test_a_written_file_is_0600_and_a_made_folder_0700_whatever_the_umask(tmp_path: Path, umask_000: None) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    write_output(target, [b"one ", b"two"], make_folders=True)
    assert target.read_bytes() == b"one two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    made = private_dir(tmp_path / "c" / "d")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700 and stat.S_IMODE(made.parent.stat().st_mode) == 0o700


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")

    class Interrupted(Exception):
        pass

    with pytest.raises(Interrupted), output_file(target) as handle:
        handle.write(b"half")
        raise Interrupted
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_a_missing_folder_is_an_os_error_unless_asked_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_output(tmp_path / "absent" / "out.txt", [b"x"])
    assert not (tmp_path / "absent").exists()


def test_a_link_at_the_final_name_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_bytes(b"theirs")
    link = tmp_path / "out.txt"
    link.symlink_to(elsewhere)
    write_output(link, [b"mine"])
    assert elsewhere.read_bytes() == b"theirs"
    assert not link.is_symlink() and link.read_bytes() == b"mine"


def test_an_output_folder_named_as_a_sidecar_of_a_store_is_refused(a_store: Path, tmp_path: Path) -> None:
    with pytest.raises(OutputRefused, match="sidecar"):
        check_output_folder(a_store.with_name(a_store.name + "-wal"))
    assert check_output_folder(tmp_path / "results") == tmp_path / "results"

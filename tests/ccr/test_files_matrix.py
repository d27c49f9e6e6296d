"""Every command that writes a file, aimed at every dangerous target, as real subprocesses.

The output rule (``ccr.files``) must hold for each writer: the store, the
memory database, a link to either, a device node, a FIFO, a socket, a
folder, the command's own input, a read-only folder and a full disk are
refused (exit 2) or fail (exit 73) with a stable error id and no
traceback, within a time bound, and leave every byte of the stores, the
inputs and the target as they were.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ccr import open_store
from compactor.memory.store import open_memory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"
SMALL = FIXTURES / "small.jsonl"
TIMEOUT_S = 180
"""A hang fails the test (no writer may block on a FIFO or a device)."""

ERROR_LINE = re.compile(rb"^(compactor|ccr): [a-z_]+: ", re.MULTILINE)


@dataclass
class World:
    """One COMPACTOR_HOME with a store and a memory database, and the inputs every writer reads."""

    home: Path
    store: Path
    memory_db: Path
    session: Path
    report: Path
    replayed: Path
    work_store: Path
    space: Path

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "COMPACTOR_HOME": str(self.home), "COMPACTOR_CONTEXT_WINDOW": "45000"}

    def protected(self) -> list[Path]:
        """Files no writer may change, whatever it is aimed at."""
        return [self.store, self.memory_db, self.session, self.report, self.replayed, self.space]


def run(world: World, program: str, *args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", program, *map(str, args)],
        capture_output=True,
        env=world.env,
        timeout=TIMEOUT_S,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("matrix")
    home = root / "home"
    home.mkdir(mode=0o700)
    store = open_store(home / "ccr.db")
    store.put(b"a record that must survive every writer\n" * 20)
    store.close()
    memory = open_memory(home / "memory.db")
    memory.remember("The staging database is reset every night at 02:00 UTC")
    memory.close()
    session = root / "inputs" / "session.jsonl"
    session.parent.mkdir()
    shutil.copyfile(SMALL, session)
    space = root / "inputs" / "space.toml"
    space.write_text('[search]\nmethod = "grid"\n\n[params]\n"pipeline.tail_tokens" = [8000]\n', encoding="utf-8")
    world = World(
        home,
        home / "ccr.db",
        home / "memory.db",
        session,
        root / "inputs" / "report.json",
        root / "inputs" / "replayed.jsonl",
        root / "work.db",
        space,
    )
    done = run(world, "compactor", "replay", session, "--json", "--store", world.work_store, "--output", world.replayed)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["compactions"], "the replay must compact, so that restore has something to undo"
    world.report.write_bytes(done.stdout)
    return world


Writer = Callable[[World, Path], subprocess.CompletedProcess[bytes]]

WRITERS: dict[str, tuple[Writer, Callable[[World], Path]]] = {
    # name: (how it runs aimed at a target, its main input)
    "replay --output": (
        lambda w, t: run(w, "compactor", "replay", w.session, "--store", w.work_store, "--output", t),
        lambda w: w.session,
    ),
    "replay --html": (
        lambda w, t: run(w, "compactor", "replay", w.session, "--store", w.work_store, "--html", t),
        lambda w: w.session,
    ),
    "show --html": (lambda w, t: run(w, "compactor", "show", w.report, "--html", t), lambda w: w.report),
    "restore --output": (
        lambda w, t: run(w, "compactor", "restore", w.replayed, "--store", w.work_store, "--output", t),
        lambda w: w.replayed,
    ),
    "ccr export": (lambda w, t: run(w, "ccr", "export", t), lambda w: w.store),
    "ccr repair --output": (lambda w, t: run(w, "ccr", "repair", "--output", t), lambda w: w.store),
    "tune --out": (
        lambda w, t: run(w, "compactor", "tune", w.session, "--space", w.space, "--no-cache", "--out", t),
        lambda w: w.space,
    ),
}


@dataclass
class Target:
    path: Path
    cleanup: Callable[[], None] = lambda: None


def _mount_tmpfs(folder: Path, options: str) -> Callable[[], None]:
    folder.mkdir(mode=0o700)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    return lambda: subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False) and None


def _fill(folder: Path) -> None:
    """Fill the file system of ``folder`` until it refuses another byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def _device(place: Path) -> Target:
    private = place / "private"
    private.mkdir(mode=0o700)
    node = private / "null-device"
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the numbers of /dev/null: writing is harmless
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return Target(node)


def _socket(place: Path) -> Target:
    path = place / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    return Target(path, server.close)


def _read_only(place: Path) -> Target:
    folder = place / "read-only"
    unmount = _mount_tmpfs(folder, "ro,size=64k")
    return Target(folder / "out", unmount)


def _full_disk(place: Path) -> Target:
    folder = place / "full"
    unmount = _mount_tmpfs(folder, "size=64k")
    try:
        _fill(folder)
    except BaseException:
        unmount()
        raise
    return Target(folder / "out", unmount)


def _link(place: Path, to: Path, name: str = "link") -> Target:
    link = place / name
    link.symlink_to(to)
    return Target(link)


TARGETS: dict[str, Callable[[World, Path, Path], Target]] = {
    # name: (world, a fresh folder, the writer's input) -> the target
    "the store": lambda w, p, i: Target(w.store),
    "the memory db": lambda w, p, i: Target(w.memory_db),
    "a store by its header": lambda w, p, i: Target(Path(shutil.copyfile(w.store, p / "notes.txt"))),
    "the store's -wal": lambda w, p, i: Target(w.store.with_name("ccr.db-wal")),
    "a link to the store": lambda w, p, i: _link(p, w.store),
    "a link to the memory db": lambda w, p, i: _link(p, w.memory_db),
    "a device node": lambda w, p, i: _device(p),
    "a FIFO": lambda w, p, i: (os.mkfifo(p / "fifo"), Target(p / "fifo"))[1],
    "a socket": lambda w, p, i: _socket(p),
    "a folder": lambda w, p, i: (os.mkdir(p / "folder"), Target(p / "folder"))[1],
    "the input": lambda w, p, i: Target(i),
    "a link to the input": lambda w, p, i: _link(p, i),
    "a read-only folder": lambda w, p, i: _read_only(p),
    "a full disk": lambda w, p, i: _full_disk(p),
}

FOLDER_WRITERS = {"tune --out"}
"""Writers whose target is a folder: a folder there is where they write, not a danger."""


def _snapshot(path: Path) -> tuple[object, ...]:
    """What must not change about ``path``: its kind, its device numbers, its bytes (through no link)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent",)
    kind = stat.S_IFMT(st.st_mode)
    if stat.S_ISREG(st.st_mode):
        return (kind, path.read_bytes())
    if stat.S_ISLNK(st.st_mode):
        return (kind, os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return (kind, sorted(os.listdir(path)))
    return (kind, st.st_rdev)


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "place"
    folder.mkdir()
    yield folder


@pytest.mark.parametrize("target_name", list(TARGETS))
@pytest.mark.parametrize("writer_name", list(WRITERS))
def test_no_writer_destroys_a_store_an_input_or_a_device(
    world: World, place: Path, writer_name: str, target_name: str
) -> None:
    if writer_name in FOLDER_WRITERS and target_name == "a folder":
        pytest.skip("a folder is what tune --out writes into")
    writer, input_of = WRITERS[writer_name]
    target = TARGETS[target_name](world, place, input_of(world))
    try:
        guarded = world.protected()
        before = {p: _snapshot(p) for p in guarded}
        aimed = _snapshot(target.path)
        done = writer(world, target.path)
        assert done.returncode in (2, 73), (done.returncode, done.stderr)
        assert b"Traceback" not in done.stderr, done.stderr
        assert ERROR_LINE.search(done.stderr), done.stderr
        assert {p: _snapshot(p) for p in guarded} == before
        for wal in (world.store.with_name("ccr.db-wal"), world.memory_db.with_name("memory.db-wal")):
            assert not wal.exists() or wal.stat().st_size == 0, "a reader wrote to the store's log"
        assert _snapshot(target.path) == aimed
        folder = target.path.parent
        if folder.is_dir() and os.access(folder, os.R_OK):
            assert not [n for n in os.listdir(folder) if n.endswith(".tmp")], "a temporary file was left behind"
    finally:
        target.cleanup()


def test_the_refusal_says_why_and_names_the_rule(world: World, place: Path) -> None:
    done = WRITERS["replay --output"][0](world, world.memory_db)
    assert done.returncode == 2
    assert done.stderr.startswith(b"compactor: output_refused: ")
    assert b"SQLite database" in done.stderr and b"nothing was changed" in done.stderr


def test_a_link_to_an_ordinary_file_is_replaced_and_the_file_it_named_is_left_alone(world: World, place: Path) -> None:
    elsewhere = place / "elsewhere.txt"
    elsewhere.write_bytes(b"not mine to change")
    link = place / "out.jsonl"
    link.symlink_to(elsewhere)
    done = WRITERS["restore --output"][0](world, link)
    assert done.returncode == 0, done.stderr
    assert elsewhere.read_bytes() == b"not mine to change"
    assert not link.is_symlink() and link.stat().st_size > 0


# -- kill -9 in the middle of a write ----------------------------------------------------

KILL_ATTEMPTS = 8


def _kill_mid_write(world: World, argv: list[str], folder: Path) -> bool:
    """Run ``argv``; SIGKILL it the moment a temporary output file appears in ``folder``.

    Returns whether it was killed mid-write (False: it finished first). Where inotify is there
    (Linux), the test waits on the folder's events and the process's exit, taking no CPU; elsewhere
    it lists the folder in a loop, which takes a whole core from the writer it watches and from the
    tests running beside it.
    """
    watch = _watch_creations(folder)
    process = subprocess.Popen(
        argv, env=world.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    try:
        if watch is None:
            while process.poll() is None:
                if any(name.endswith(".tmp") for name in os.listdir(folder)):
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    return True
            return False
        exited = os.pidfd_open(process.pid)
        try:
            while True:
                ready, _, _ = select.select([watch, exited], [], [])
                if watch in ready and any(name.endswith(".tmp") for name in _created(watch)):
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    return process.returncode == -signal.SIGKILL  # not when it had finished meanwhile
                if exited in ready:
                    return False
        finally:
            os.close(exited)
    finally:
        if watch is not None:
            os.close(watch)
        if process.poll() is None:
            process.kill()
        process.wait()


_IN_MOVED_TO, _IN_CREATE = 0x80, 0x100
_EVENT = struct.Struct("iIII")
"""inotify's ``struct inotify_event`` before its name: wd, mask, cookie, len."""


def _watch_creations(folder: Path) -> int | None:
    """An inotify descriptor that reports the names created in (or moved into) ``folder``; None without
    inotify or ``os.pidfd_open`` (not Linux)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    fd = int(libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK))
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_CREATE | _IN_MOVED_TO) < 0:
        os.close(fd)
        return None
    return fd


def _created(watch: int) -> list[str]:
    """The names of the events waiting on ``watch``."""
    data, names = os.read(watch, 64 * 1024), []
    while data:
        *_, size = _EVENT.unpack_from(data)
        names.append(os.fsdecode(data[_EVENT.size : _EVENT.size + size].rstrip(b"\0")))
        data = data[_EVENT.size + size :]
    return names


@pytest.mark.parametrize("writer_name", list(WRITERS))
def test_kill_9_in_the_middle_of_a_write_leaves_the_old_file_whole(
    world: World, tmp_path: Path, writer_name: str
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    name = "results" if writer_name in FOLDER_WRITERS else "target.out"
    target = folder / name
    reference = folder / "reference.out"
    finished = subprocess.run(_argv(world, writer_name, reference), env=world.env, capture_output=True, check=False)
    assert finished.returncode == 0, finished.stderr
    assert _whole(writer_name, reference, reference)
    killed = 0
    for _ in range(KILL_ATTEMPTS):
        for leftover in folder.iterdir():  # a temporary file a killed writer could not remove
            if leftover.name.endswith(".tmp"):
                leftover.unlink()
        if writer_name == "ccr repair --output" and target.exists():
            target.unlink()
        watched = target if writer_name in FOLDER_WRITERS else folder
        if writer_name in FOLDER_WRITERS:
            target.mkdir(exist_ok=True)
            (target / "results.json").write_bytes(b"old results")
        elif writer_name != "ccr repair --output":
            target.write_bytes(b"old")
        before = _snapshot(target) if writer_name not in FOLDER_WRITERS else (target / "results.json").read_bytes()
        argv = _argv(world, writer_name, target)
        if _kill_mid_write(world, argv, watched):
            killed += 1
            # killed before the rename: the old file; after it: the whole new one; never a part
            after = _snapshot(target / "results.json" if writer_name in FOLDER_WRITERS else target)
            old = (stat.S_IFREG, before) if writer_name in FOLDER_WRITERS else before
            assert after == old or _whole(writer_name, target, reference), "a partial file under the final name"
    assert killed, f"{writer_name} always finished before it could be killed mid-write"


def _whole(writer_name: str, path: Path, reference: Path) -> bool:
    """Whether ``path`` holds a whole output of ``writer_name`` (outputs with a time in them are parsed)."""
    from ccr.archive import read_archive

    if writer_name == "ccr export":
        with path.open("rb") as handle:
            return bool(read_archive(handle)[0])
    if writer_name == "tune --out":
        return "trials" in json.loads((path / "results.json").read_text(encoding="utf-8"))
    if writer_name == "ccr repair --output":
        with open_store(path, readonly=True) as store:
            return bool(store.records()) and not store.verify()
    return path.read_bytes() == reference.read_bytes()


def _argv(world: World, writer_name: str, target: Path) -> list[str]:
    programs = {
        "replay --output": ["compactor", "replay", world.session, "--store", world.work_store, "--output", target],
        "replay --html": ["compactor", "replay", world.session, "--store", world.work_store, "--html", target],
        "show --html": ["compactor", "show", world.report, "--html", target],
        "restore --output": ["compactor", "restore", world.replayed, "--store", world.work_store, "--output", target],
        "ccr export": ["ccr", "export", target],
        "ccr repair --output": ["ccr", "repair", "--output", target],
        "tune --out": ["compactor", "tune", world.session, "--space", world.space, "--no-cache", "--out", target],
    }
    program, *args = programs[writer_name]
    return [sys.executable, "-m", str(program), *map(str, args)]


# -- modes under umask 000 ---------------------------------------------------------------


def test_under_umask_000_every_written_file_is_0600_and_every_made_folder_0700(world: World, tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    env = {**world.env, "COMPACTOR_HOME": str(home)}
    out = tmp_path / "made" / "deeper"

    def run_open(*args: str | Path) -> None:
        done = subprocess.run(
            [sys.executable, "-m", *map(str, args)],
            env=env,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
            preexec_fn=lambda: os.umask(0),
        )
        assert done.returncode == 0, done.stderr

    run_open(
        "compactor",
        "replay",
        world.session,
        "--store",
        world.work_store,
        "--output",
        out / "replayed.jsonl",
        "--html",
        out / "replay.html",
    )
    run_open("compactor", "show", world.report, "--html", out / "show.html")
    run_open("compactor", "restore", world.replayed, "--store", world.work_store, "--output", out / "restored.jsonl")
    run_open("ccr", "--store", world.work_store, "export", out / "archive.jsonl")
    run_open("compactor", "tune", world.session, "--space", world.space, "--out", out / "tune-results")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {
        "replayed.jsonl",
        "replay.html",
        "show.html",
        "restored.jsonl",
        "archive.jsonl",
        "results.json",
        "report.html",
    }
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    cache = home / "tune"
    folders = [tmp_path / "made", out, out / "tune-results", cache, *(p for p in cache.rglob("*") if p.is_dir())]
    assert len(folders) > 4, "the tune cache made no subfolder"
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder

"""Masking between compactions: old tool results become stubs, their exact bytes in CCR."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from attachments import RecordedFiles
from ccr import MemoryStore, Store, find_handles, open_store, parse_ref, tinyjuice_marker
from compactor.claude_code.replay import ReplayReport, replay
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import DedupSettings, MaskingSettings, load_settings
from compactor.core.errors import ConfigError
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import DedupState
from compactor.core.tokens import RoughCounter
from compactor.engine.dedup import expand_references, reference_text, without_result_id
from compactor.engine.masking import Masker, masking_decision, result_text
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.policy import auto_compact_threshold
from compactor.engine.survival import head_facts
from compactor.summarizers import ExtractiveSummarizer
from compactor.summarizers.prompts import typed
from compactor.tune import load_space

REPO = Path(__file__).resolve().parents[3]
LONG = REPO / "fixtures" / "sessions" / "long.jsonl"

BIG = "".join(f"{n:4d}  def handler_{n}(request): return respond(request, {n})\n" for n in range(1, 121))


def _call(call_id: str, name: str, **tool_input: Any) -> Message:
    return Message(
        role="assistant",
        content=[TextBlock(text=f"Calling {name}"), ToolUseBlock(id=call_id, name=name, input=tool_input)],
    )


def _result(call_id: str, content: str, *, is_error: bool = False) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=call_id, content=content, is_error=is_error)])


def _conversation(rounds: int = 8) -> list[Message]:
    out = [Message(role="user", content="Find why the handlers return 500")]
    for n in range(rounds):
        out += [
            _call(f"b{n}", "Bash", command=f"grep -rn handler src/part{n}\necho done"),
            _result(f"b{n}", BIG + f"end {n}"),
        ]
    return out


def _masker(messages: list[Message], **settings: Any) -> Masker:
    masker = Masker(MaskingSettings(enabled=True, **settings), ("ccr_retrieve",))
    masker.reset(messages)
    return masker


def _mask(messages: list[Message], store: Store, dedup: DedupState | None = None, **settings: Any) -> Any:
    masker = _masker(messages, **settings)
    names = {c.id: c.name for m in messages for c in m.tool_uses()}
    return masker.mask(messages, store=store, counter=RoughCounter(), dedup=dedup or DedupState(), tool_names=names)


def _texts(messages: list[Message]) -> dict[str, str]:
    return {b.tool_use_id: result_text(b) or "" for m in messages for b in m.tool_results()}


def _pairs_are_intact(messages: list[Message]) -> bool:
    """Every tool_result follows its tool_use, and every tool_use has its tool_result."""
    asked: list[str] = []
    answered: list[str] = []
    for message in messages:
        asked += [u.id for u in message.tool_uses()]
        for block in message.tool_results():
            if block.tool_use_id not in asked:
                return False
            answered.append(block.tool_use_id)
    return sorted(asked) == sorted(answered)


def _pairing(messages: list[Message]) -> list[tuple[str, list[str], list[tuple[str, bool]]]]:
    return [
        (m.role, [u.id for u in m.tool_uses()], [(b.tool_use_id, b.is_error) for b in m.tool_results()])
        for m in messages
    ]


# -- whether --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "tokens", "cold", "run", "ran_as"),
    [
        ("cold", 30_000, True, False, None),  # below the soft threshold (40% of 100,000)
        ("cold", 50_000, True, True, "cold"),
        ("cold", 50_000, False, False, None),  # warm cache: wait
        ("cold", 95_000, False, True, "batch"),  # near the compaction: one batch
        ("batch", 50_000, True, False, None),
        ("batch", 95_000, False, True, "batch"),
        ("eager", 50_000, False, True, "eager"),
    ],
)
def test_masking_runs_past_the_soft_threshold_as_the_cache_policy_allows(
    policy: str, tokens: int, cold: bool, run: bool, ran_as: str | None
) -> None:
    settings = MaskingSettings(enabled=True, cache_policy=policy, soft_share=0.4, batch_share=0.95)  # type: ignore[arg-type]
    decision = masking_decision(tokens, 100_000, settings, cold=cold)
    assert (decision.run, decision.policy) == (run, ran_as)


def test_masking_never_runs_when_it_is_off() -> None:
    decision = masking_decision(10**6, 100_000, MaskingSettings(enabled=False), cold=True)
    assert not decision.run and decision.reason == "disabled"


def test_a_batch_threshold_below_the_soft_threshold_is_refused() -> None:
    with pytest.raises(ConfigError, match="batch_share"):
        load_settings(env={}, overrides={"masking.soft_share": 0.8, "masking.batch_share": 0.5})


def test_masking_settings_come_from_the_environment_and_tunes_space() -> None:
    assert load_settings(env={"COMPACTOR_MASKING": "on"}).masking.enabled
    space = load_space_text(
        '[params]\n"masking.enabled" = [true, false]\n"masking.keep_rounds" = [2, 4]\n'
        '"masking.min_tokens" = [200, 800]\n"masking.soft_share" = [0.3, 0.6]\n'
    )
    assert space.size == 16
    with pytest.raises(ConfigError):
        load_space_text('[params]\n"masking.keep_rounds" = [0]\n')


def load_space_text(text: str) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "space.toml"
        path.write_text(text)
        return load_space(path)


# -- how -----------------------------------------------------------------------


def test_old_large_results_become_stubs_naming_the_tool_input_lines_size_and_handle() -> None:
    messages = _conversation(8)
    store = MemoryStore(max_bytes=10**8)
    outcome = _mask(messages, store, keep_rounds=3, min_tokens=300)
    assert outcome.ok and outcome.results == 5  # rounds 0-4; the last 3 are kept
    masked = _texts(outcome.messages)
    stub = masked["b0"]
    handle = find_handles(stub)[0]
    assert store.get(handle) == (BIG + "end 0").encode()
    assert "Bash" in stub and "grep -rn handler src/part0" in stub
    assert "def handler_1(request)" in stub and "end 0" in stub  # first and last lines
    assert f"{len((BIG + 'end 0').encode())} bytes" in stub and "121 lines" in stub
    assert f"<<ccr:{handle}>>" in stub
    assert outcome.handles[0] == handle
    for n in (5, 6, 7):
        assert masked[f"b{n}"] == BIG + f"end {n}"
    assert _pairs_are_intact(outcome.messages)
    assert [m.tool_uses() for m in outcome.messages] == [m.tool_uses() for m in messages]


def test_small_results_errors_and_recovered_content_are_never_masked() -> None:
    messages = [
        Message(role="user", content="go"),
        _call("small", "Bash", command="ls"),
        _result("small", "a.py\nb.py"),
        _call("err", "Bash", command="pytest"),
        _result("err", BIG, is_error=True),
        _call("rec", "ccr_retrieve", handle="ccr_" + "1" * 32),
        _result("rec", BIG),
        _call("mcp", "mcp__ccr__ccr_retrieve", handle="ccr_" + "2" * 32),
        _result("mcp", BIG),
        *_conversation(4)[1:],
    ]
    outcome = _mask(messages, MemoryStore(max_bytes=10**8), keep_rounds=2, min_tokens=300)
    masked = _texts(outcome.messages)
    assert masked["small"] == "a.py\nb.py"
    assert masked["err"] == BIG and masked["rec"] == BIG and masked["mcp"] == BIG
    assert outcome.results == 2 and masked["b0"] != BIG + "end 0"


def test_tinyjuice_recovery_answers_are_never_masked_with_the_default_recovery_tools() -> None:
    messages = [
        Message(role="user", content="go"),
        _call("tj", "tokenjuice_retrieve", token="tj:" + "1" * 32),
        _result("tj", BIG),
        _call("legacy", "retrieve_tool_output", token="2" * 32),
        _result("legacy", BIG),
        *_conversation(4)[1:],
    ]
    masker = Masker(MaskingSettings(enabled=True, keep_rounds=2, min_tokens=300), DedupSettings().recovery_tools)
    masker.reset(messages)
    names = {c.id: c.name for m in messages for c in m.tool_uses()}
    outcome = masker.mask(
        messages, store=MemoryStore(max_bytes=10**8), counter=RoughCounter(), dedup=DedupState(), tool_names=names
    )
    masked = _texts(outcome.messages)
    assert masked["tj"] == BIG and masked["legacy"] == BIG
    assert outcome.results == 2 and masked["b0"] != BIG + "end 0"


def test_a_read_superseded_by_a_later_edit_becomes_a_pointer_whatever_its_size() -> None:
    small_read = "     1\tx = 1\n     2\ty = 2\n" * 40  # below min_tokens, above the pointer
    messages = [
        Message(role="user", content="fix config"),
        _call("r1", "Read", file_path="/repo/config.py"),
        _result("r1", small_read),
        _call("e1", "Edit", file_path="/repo/config.py", old_string="x = 1", new_string="x = 2"),
        _result("e1", "The file /repo/config.py has been updated."),
        _call("r2", "Read", file_path="/repo/other.py"),
        _result("r2", small_read),
        *_conversation(3)[1:],
    ]
    store = MemoryStore(max_bytes=10**8)
    outcome = _mask(messages, store, keep_rounds=3, min_tokens=10_000)
    masked = _texts(outcome.messages)
    assert outcome.superseded == 1 and outcome.results == 1
    assert "/repo/config.py" in masked["r1"] and "Edit" in masked["r1"] and "e1" in masked["r1"]
    assert store.get(find_handles(masked["r1"])[0]) == small_read.encode()
    assert masked["r2"] == small_read  # not superseded, and small


def test_a_partial_read_does_not_supersede_a_whole_one() -> None:
    messages = [
        Message(role="user", content="look"),
        _call("r1", "Read", file_path="/repo/a.py"),
        _result("r1", BIG),
        _call("r2", "Read", file_path="/repo/a.py", offset=10, limit=5),
        _result("r2", BIG[:300]),
        *_conversation(3)[1:],
    ]
    outcome = _mask(messages, MemoryStore(max_bytes=10**8), keep_rounds=3, min_tokens=10_000)
    assert outcome.results == 0


def test_a_store_that_refuses_leaves_every_result_in_place() -> None:
    messages = _conversation(6)
    outcome = _mask(messages, MemoryStore(max_bytes=100), keep_rounds=2, min_tokens=300)
    assert not outcome.ok and outcome.error_id == "ccr_budget_exceeded"
    assert outcome.messages == messages and outcome.changed == []


def test_a_store_that_cannot_write_leaves_every_result_in_place(tmp_path: Path) -> None:
    open_store(tmp_path / "ccr.db").close()
    messages = _conversation(6)  # a read-only store raises the shared StoreError, not a CCRError
    with open_store(tmp_path / "ccr.db", readonly=True) as store:
        outcome = _mask(messages, store, keep_rounds=2, min_tokens=300)
    assert not outcome.ok and outcome.error_id == "store_error"
    assert outcome.messages == messages and outcome.changed == []


def test_masking_a_dedup_first_occurrence_points_its_references_at_the_stored_original(tmp_path: Path) -> None:
    orch = _orchestrator(tmp_path, cache_policy="eager", soft_share=0.01, keep_rounds=2)
    orch.add_message(Message(role="user", content="read it twice"))
    orch.add_message(_call("r1", "Read", file_path="/repo/a.py"))
    orch.add_message(_result("r1", BIG))
    orch.add_message(_call("r2", "Read", file_path="/repo/b.py"))
    orch.add_message(_result("r2", BIG))  # the same bytes: a reference to r1
    assert reference_text("Read", "r1") in _texts(orch.messages)["r2"]
    for n in range(3):
        orch.add_message(_call(f"x{n}", "Bash", command=f"echo {n}"))
        orch.add_message(_result(f"x{n}", "ok"))
    texts = _texts(orch.messages)
    assert "[result-id: r1]" not in texts["r1"] and find_handles(texts["r1"])
    original_handle = orch.state.dedup.handles["r1"]
    assert texts["r2"] == reference_text("Read", "r1", original_handle)
    assert orch.store.get(original_handle) == BIG.encode()
    # Nothing dangles: making references resolvable changes nothing.
    assert expand_references(orch.messages, orch.state.dedup) == orch.messages
    # A later repeat comes in whole, as a new first occurrence.
    orch.add_message(_call("r3", "Read", file_path="/repo/a.py"))
    kept = orch.add_message(_result("r3", BIG))
    assert without_result_id(_texts([kept])["r3"]) == BIG and "[result-id: r2]" in _texts([kept])["r3"]


# -- the Orchestrator ------------------------------------------------------------


def _orchestrator(tmp_path: Path, **masking: Any) -> Orchestrator:
    settings = load_settings(
        env={},
        overrides={
            "masking": {"enabled": True, **masking},
            "counter": "rough",
            "policy": {"context_window": 30_000, "max_output_tokens": 2_000, "autocompact_buffer": 1_000},
            "pipeline.tail_tokens": 500,
        },
    )
    return Orchestrator(
        settings=settings,
        store=open_store(tmp_path / "ccr.db"),
        counter=RoughCounter(),
        summarizer=ExtractiveSummarizer(),
        files=RecordedFiles(),
    )


def _stamp(seconds: int) -> str:
    return f"2025-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"


def _feed(orch: Orchestrator, rounds: int, *, gap: int, start: int = 0, pause_at: int | None = None) -> None:
    t = start
    orch.add_message(Message(role="user", content="Find why the handlers return 500", timestamp=_stamp(t)))
    for n in range(rounds):
        t += gap
        if n == pause_at:  # the user comes back after an hour: the cache has expired
            t += 3600
            orch.add_message(Message(role="user", content="Go on", timestamp=_stamp(t)))
        call = _call(f"b{n}", "Bash", command=f"grep -rn handler src/part{n}")
        orch.add_message(call.model_copy(update={"timestamp": _stamp(t)}))
        orch.add_message(_result(f"b{n}", BIG + f"end {n}").model_copy(update={"timestamp": _stamp(t + 1)}))


def test_the_orchestrator_masks_as_messages_arrive_once_past_the_soft_threshold(tmp_path: Path) -> None:
    orch = _orchestrator(tmp_path, cache_policy="eager", keep_rounds=2)
    _feed(orch, 12, gap=5)
    assert orch.masking_steps
    step = orch.masking_steps[0]
    assert step.ok and step.policy == "eager" and step.results >= 1 and step.tokens_saved > 0
    soft = int(auto_compact_threshold(orch.settings) * orch.settings.masking.soft_share)
    assert step.tokens_before >= soft and step.handles
    assert step.cache.invalidated_tokens > 0 and not step.cache.cold
    assert _pairs_are_intact(orch.messages)
    assert orch.tokens_of_messages() == sum(RoughCounter().count_message(m) for m in orch.messages)
    assert not orch.should_compact().compact


def test_masking_off_leaves_the_conversation_alone(tmp_path: Path) -> None:
    orch = _orchestrator(tmp_path, enabled=False)
    _feed(orch, 12, gap=5)
    assert orch.masking_steps == []
    assert all(not find_handles(t) for t in _texts(orch.messages).values())


def test_the_cold_policy_waits_for_the_cache_to_go_cold(tmp_path: Path) -> None:
    warm = _orchestrator(tmp_path / "warm", cache_policy="cold", keep_rounds=2, batch_share=1.0)
    _feed(warm, 9, gap=5)
    assert warm.masking_steps == []
    cold = _orchestrator(tmp_path / "cold", cache_policy="cold", keep_rounds=2, batch_share=1.0)
    _feed(cold, 9, gap=5, pause_at=8)
    assert [s.policy for s in cold.masking_steps] == ["cold"]
    assert cold.masking_steps[0].cache.cold and cold.masking_steps[0].cache.invalidated_tokens == 0


def test_a_compaction_after_masking_keeps_every_reference_resolvable(tmp_path: Path) -> None:
    orch = _orchestrator(tmp_path, cache_policy="eager", keep_rounds=2)
    _feed(orch, 10, gap=5)
    assert orch.masking_steps
    result = orch.compact("manual")
    assert result.ok
    assert _pairs_are_intact([m for m in result.messages if not m.is_compact_summary])
    assert expand_references(result.messages, result.state.dedup) == result.messages


# -- real sessions: masking on against off -------------------------------------------


Replays = Callable[[Path, bool], tuple[ReplayReport, Store]]


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replays]:
    """Replay a session with masking on or off, once per module; the store stays open for checks."""
    folder = tmp_path_factory.mktemp("masking-replays")
    done: dict[tuple[Path, bool], tuple[ReplayReport, Store]] = {}

    def get(path: Path, masking: bool) -> tuple[ReplayReport, Store]:
        if (path, masking) not in done:
            store = open_store(folder / f"{len(done)}.db")
            settings = load_settings(env={}, overrides={"masking.enabled": masking})
            done[(path, masking)] = (replay(path, settings=settings, store=store, warn=lambda _w: None), store)
        return done[(path, masking)]

    yield get
    for _, store in done.values():
        store.close()


def _sessions(shared_transcript: Path | None) -> Path:
    assert shared_transcript is not None
    return shared_transcript


def _per_100(report: ReplayReport) -> float:
    t = report.totals
    return 100 * t.cache_invalidated_tokens / t.requests if t.requests else 0.0


def _check_halves_compactions(replays: Replays, path: Path) -> None:
    on, off = replays(path, True)[0], replays(path, False)[0]
    assert on.totals.compactions <= off.totals.compactions / 2
    assert not on.failures and not [s for s in on.masking if not s.ok]
    if off.totals.compactions:
        assert on.masking  # the interesting branch ran


def _check_cache(replays: Replays, path: Path) -> None:
    on, off = replays(path, True)[0], replays(path, False)[0]
    assert _per_100(on) <= _per_100(off)
    assert on.totals.requests == off.totals.requests > 0


def _check_byte_exact(replays: Replays, path: Path) -> None:
    report, store = replays(path, True)
    recorded = {
        b.tool_use_id: b.text()
        for e in read_transcript(path, subagents=False, state=False).entries
        if e.message is not None
        for b in e.message.tool_results()
    }
    handles = [h for step in report.masking for h in step.handles]
    for handle in handles:
        data = store.get(handle).decode()
        original = recorded[(store.record(handle).metadata or {})["tool_use_id"]]
        assert data == original or (data != without_result_id(data) == original)
    assert len(handles) == report.totals.masked_results


def test_masking_halves_full_compactions_on_real_sessions(replays: Replays, shared_transcript: Path) -> None:
    _check_halves_compactions(replays, _sessions(shared_transcript))


def test_masking_invalidates_no_more_cached_prefix_per_request_on_real_sessions(
    replays: Replays, shared_transcript: Path
) -> None:
    _check_cache(replays, _sessions(shared_transcript))


def test_every_masked_result_of_a_real_session_is_stored_byte_exact(replays: Replays, shared_transcript: Path) -> None:
    _check_byte_exact(replays, _sessions(shared_transcript))


def test_masking_on_the_long_fixture_halves_compactions_keeps_the_cache_and_every_byte(replays: Replays) -> None:
    _check_halves_compactions(replays, LONG)
    _check_cache(replays, LONG)
    _check_byte_exact(replays, LONG)


def _masked_context(path: Path, tmp_path: Path) -> tuple[list[Message], Orchestrator]:
    """The session fed through an Orchestrator that masks at every chance and never compacts."""
    settings = load_settings(
        env={},
        overrides={
            "masking": {"enabled": True, "cache_policy": "eager", "soft_share": 0.001, "batch_share": 0.001},
            "policy.compact": False,
        },
    )
    orch = Orchestrator(settings=settings, store=open_store(tmp_path / "ccr.db"), files=RecordedFiles())
    fed: list[Message] = []
    for entry in read_transcript(path, subagents=False, state=False).entries:
        if entry.message is not None and not entry.message.is_compact_summary:
            fed.append(orch.add_message(entry.message))
    return fed, orch


def _check_facts(path: Path, tmp_path: Path) -> None:
    fed, orch = _masked_context(path, tmp_path)
    masked = orch.messages
    steps = [s for s in orch.masking_steps if s.ok]
    changed = [n for n, (a, b) in enumerate(zip(fed, masked, strict=True)) if a != b]
    if not changed:
        assert not steps
        return
    assert steps
    part_before, part_after = fed[: changed[-1] + 1], masked[: changed[-1] + 1]
    facts = head_facts(part_before)
    assert head_facts(part_after) == facts
    flat = json.dumps([m.to_api() for m in part_after], ensure_ascii=False)
    for kind in ("paths", "commands"):
        for value in facts[kind]:
            assert json.dumps(value, ensure_ascii=False)[1:-1] in flat, (kind, value)
    typed_by_user = [n for n, m in enumerate(part_before) if typed(m) is not None]
    assert len(typed_by_user) >= len(facts["user_messages"])
    assert all(part_after[n] == part_before[n] for n in typed_by_user)  # every user message, untouched
    # The recording may hold calls never answered (interrupted); masking changes no pairing.
    assert _pairing(masked) == _pairing(fed)
    assert all(
        isinstance(b.content, str) or b.content == o.content
        for m, f in zip(masked, fed, strict=True)
        for b, o in zip(m.tool_results(), f.tool_results(), strict=True)
    )
    assert expand_references(masked, orch.state.dedup) == masked


def test_masking_keeps_paths_commands_and_user_messages_of_a_real_session_verbatim(
    shared_transcript: Path, tmp_path: Path
) -> None:
    _check_facts(_sessions(shared_transcript), tmp_path)


def test_masking_keeps_paths_commands_and_user_messages_of_the_long_fixture_verbatim(tmp_path: Path) -> None:
    _check_facts(LONG, tmp_path)


# -- the command line ---------------------------------------------------------------


def _replay_json(tmp_path: Path, masking: str) -> dict[str, Any]:
    """``compactor replay --json`` of the long fixture with ``--masking`` set, into a store in ``tmp_path``."""
    store = str(tmp_path / "ccr.db")
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "replay", str(LONG), "--json", "--masking", masking, "--store", store],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_replay_masking_on_lists_each_step_and_totals(tmp_path: Path) -> None:
    report = _replay_json(tmp_path, "on")
    assert report["masking"]
    for step in report["masking"]:
        assert {"at_line", "results", "tokens_saved", "handles", "policy", "cache"} <= set(step)
        assert step["at_line"] > 0 and len(step["handles"]) == step["results"]
    totals = report["totals"]
    assert totals["masking_steps"] == len(report["masking"])
    assert totals["masked_results"] == sum(s["results"] for s in report["masking"])
    assert totals["requests"] > 0
    got = subprocess.run(
        [sys.executable, "-m", "ccr", "get", report["masking"][0]["handles"][0], "--store", str(tmp_path / "ccr.db")],
        capture_output=True,
        check=False,
    )
    assert got.returncode == 0 and got.stdout


def test_replay_masking_off_masks_nothing(tmp_path: Path) -> None:
    report = _replay_json(tmp_path, "off")
    assert report["masking"] == [] and report["totals"]["compactions"] > 0
    assert all(c["cache"]["kept_tokens"] == 0 for c in report["compactions"])


def test_tune_judges_masking_by_its_steps_and_the_cache_it_invalidates(replays: Replays) -> None:
    from compactor.tune import replay_metrics

    on, off = replay_metrics(replays(LONG, True)[0]), replay_metrics(replays(LONG, False)[0])
    assert on.masking_steps > 0 and off.masking_steps == 0
    assert on.requests == off.requests > 0
    per_100 = off.cache_invalidated_per_100_requests
    assert per_100 is not None and per_100 > 0
    assert per_100 == 100 * replays(LONG, False)[0].totals.cache_invalidated_tokens / off.requests


def test_the_tinyjuice_footer_renders_a_partial_view_that_names_tokenjuice_retrieve_and_its_token() -> None:
    messages = _conversation(8)
    store = MemoryStore(max_bytes=10**8)
    ours = _texts(_mask(messages, store, keep_rounds=3, min_tokens=300).messages)["b0"]
    stub = _texts(_mask(messages, store, keep_rounds=3, min_tokens=300, footer="tinyjuice").messages)["b0"]
    handle = find_handles(ours)[0]
    assert store.get(handle) == (BIG + "end 0").encode()
    assert "<<ccr:" not in stub and "def handler_1(request)" in stub and "end 0" in stub
    footer = stub.splitlines()[-1]
    assert footer.startswith("[compacted tool output - this is a PARTIAL view; the full original (")
    assert footer.endswith(f'is available by calling tokenjuice_retrieve with token "{tinyjuice_marker(handle)}"]')
    assert find_handles(stub) == [handle] and parse_ref(tinyjuice_marker(handle)).handle == handle


def test_the_footer_is_a_setting_whose_default_is_ours() -> None:
    assert load_settings(None, env={}).masking.footer == "compactor"
    assert load_settings(None, env={}, overrides={"masking.footer": "tinyjuice"}).masking.footer == "tinyjuice"
    with pytest.raises(ConfigError, match="footer"):
        load_settings(None, env={}, overrides={"masking.footer": "loud"})


def test_the_stub_of_a_read_shows_its_last_line_with_content() -> None:
    read = "".join(f"{n:6d}→line {n}\n" for n in range(1, 200)) + "   200→\n"
    messages = [
        Message(role="user", content="read"),
        _call("r1", "Read", file_path="/repo/a.py"),
        _result("r1", read),
        *_conversation(3)[1:],
    ]
    stub = _texts(_mask(messages, MemoryStore(max_bytes=10**8), keep_rounds=3, min_tokens=300).messages)["r1"]
    assert "first line: 1→line 1" in stub and "last line: 199→line 199" in stub


def test_the_replay_table_shows_masking_and_what_the_prompt_cache_lost(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compactor",
            "replay",
            str(LONG),
            "--masking",
            "on",
            "--store",
            str(tmp_path / "ccr.db"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^masking: [1-9]\d* steps \(cold\), [1-9]\d* results, [\d,]+ tokens saved", done.stdout, re.M)
    assert "prompt cache: 0 cached tokens invalidated (0 per 100 requests)" in done.stdout


def test_mask_on_demand_runs_below_the_soft_threshold_only_when_forced(tmp_path: Path) -> None:
    orch = _orchestrator(tmp_path, soft_share=1.0, batch_share=1.0, keep_rounds=2)
    _feed(orch, 4, gap=5)
    assert orch.masking_steps == [] and orch.mask() is None
    step = orch.mask(force=True)
    assert step is not None and step.ok and step.results == 2
    assert orch.masking_steps == [step]
    assert orch.mask(force=True) is None  # nothing else is due


_TOOLS = ("Read", "Bash", "Grep", "ccr_retrieve", "Edit")


@st.composite
def _histories(draw: st.DrawFn) -> list[Message]:
    out = [Message(role="user", content="start")]
    for n in range(draw(st.integers(min_value=2, max_value=12))):
        tool = draw(st.sampled_from(_TOOLS))
        path = draw(st.sampled_from(("/r/a.py", "/r/b.py")))
        text = draw(st.text(alphabet=st.sampled_from("ab \n→1é"), min_size=1, max_size=60)) * draw(st.integers(0, 60))
        out += [
            _call(f"c{n}", tool, file_path=path, command=f"run {n}"),
            _result(f"c{n}", text, is_error=draw(st.booleans()) and n % 3 == 0),
        ]
        if draw(st.booleans()):
            out.append(Message(role="user", content=f"and now step {n}"))
    return out


@settings(max_examples=60, deadline=None)
@given(history=_histories(), keep=st.integers(min_value=1, max_value=3))
def test_masking_any_history_gives_every_original_back_and_changes_nothing_else(
    history: list[Message], keep: int
) -> None:
    store = MemoryStore(max_bytes=10**8)
    outcome = _mask(history, store, keep_rounds=keep, min_tokens=5)
    event("masked" if outcome.results else "nothing due")
    assert _pairing(outcome.messages) == _pairing(history)
    assert head_facts(outcome.messages) == head_facts(history)
    before, after = _texts(history), _texts(outcome.messages)
    changed = {k for k in before if before[k] != after[k]}
    assert len(changed) == outcome.results
    for call_id in changed:
        (handle,) = find_handles(after[call_id])
        assert store.get(handle) == before[call_id].encode("utf-8", "surrogatepass")
    for old, new in zip(history, outcome.messages, strict=True):
        if old.role == "assistant" or typed(old) is not None:
            assert new == old
    names = {c.id: c.name for m in history for c in m.tool_uses()}
    assert not any(names[k] == "ccr_retrieve" for k in changed)

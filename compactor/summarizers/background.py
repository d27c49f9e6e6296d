"""The background summary: a model summarizes the aged-out head while the agent works.

``BackgroundSummaries`` runs at most one model request at a time, each on
a worker thread of its own: the Orchestrator hands it the head a compaction
would drop now (the part older than the tail window) as the context grows,
and keeps only the latest finished summary of the current conversation.
A compaction never waits on the model longer than a bound: it asks
``choose`` (or ``achoose`` from an event loop) for the latest summary whose
messages are still the head's first messages, and summarizes with a
``BlendedSummarizer``: the model's summary of that prefix, then the
extractive rendering of what is newer (with the session ledger, which the
extractive summary renders whole). Without a usable model summary (none
yet, the model failed or is backing off after a 429, or the conversation
changed since) the whole head is rendered extractively. Either way
``Summary.sources`` (the report's ``summary_sources``) says which messages
came from where and why.

A result is recognized by the fingerprints of the messages it covers (their
content, without the recorded usage), so that a summary of a conversation
that was compacted or masked meanwhile is discarded, never merged.
Nothing here stores or drops anything: the pipeline stores every span of the
head before anything is dropped, as with any summarizer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from compactor.core.config import BackgroundSettings
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.core.templating import render
from compactor.engine.pipeline import without_recovered_content
from compactor.engine.spans import Span
from compactor.summarizers.base import CitingSummarizer, Summary, SummarySource

__all__ = ["BackgroundSummaries", "BlendedSummarizer", "Choice", "fingerprints", "retry_after_seconds"]


def fingerprints(messages: Sequence[Message]) -> tuple[bytes, ...]:
    """One digest per message of what it says (recorded usage left out: it is not content)."""
    return tuple(
        hashlib.blake2b(m.model_dump_json(exclude={"usage"}).encode("utf-8"), digest_size=16).digest() for m in messages
    )


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait a failed request's response asked for (``retry-after-ms`` or ``retry-after``), if any.

    The SDK's error is found on the chain of causes, so a ``SummarizerError``
    raised from it works too. ``retry-after`` may be seconds or an HTTP date.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        headers = getattr(getattr(current, "response", None), "headers", None)
        if headers is not None:
            millis = headers.get("retry-after-ms")
            if millis is not None:
                try:
                    return max(0.0, float(millis) / 1000)
                except ValueError:
                    pass
            raw = headers.get("retry-after")
            if raw is not None:
                try:
                    return max(0.0, float(raw))
                except ValueError:
                    try:
                        when = email.utils.parsedate_to_datetime(raw)
                    except (TypeError, ValueError):
                        when = None
                    if when is not None and when.tzinfo is not None:
                        return max(0.0, when.timestamp() - time.time())
        current = current.__cause__ or current.__context__
    return None


@dataclass(frozen=True)
class _Outcome:
    """A finished background request: the summary of the messages fingerprinted, or why there is none."""

    prints: tuple[bytes, ...]
    summary: Summary | None
    error: str | None


@dataclass
class _Job:
    generation: int
    prints: tuple[bytes, ...]
    future: concurrent.futures.Future[_Outcome]


@dataclass(frozen=True)
class Choice:
    """What a compaction summarizes with: the model's summary of the head's first ``covered``
    messages (None: none usable), and why (``reason``) the rest is extractive."""

    summary: Summary | None
    covered: int
    reason: str


def _is_prefix(prefix: Sequence[bytes], whole: Sequence[bytes]) -> bool:
    return 0 < len(prefix) <= len(whole) and tuple(whole[: len(prefix)]) == tuple(prefix)


class BackgroundSummaries:
    """Background summaries of one session by ``llm``, one request at a time (see the module docstring).

    ``clock`` is monotonic seconds (for the back-off after a failure). Call
    ``close`` when done: it joins the worker (a request in flight finishes or
    times out first, within the summarizer's own timeout).
    """

    def __init__(
        self,
        llm: CitingSummarizer,
        settings: BackgroundSettings,
        *,
        recovery_tools: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.llm = llm
        self.settings = settings
        self.recovery_tools = tuple(recovery_tools)
        self._clock = clock
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._generation = 0
        self._running: _Job | None = None
        self._latest: _Outcome | None = None
        self._last_error: str | None = None
        self._not_before = 0.0
        self._closed = False
        self.requests = 0
        """Background requests started so far."""
        self.discarded = 0
        """Finished requests whose conversation had changed meanwhile (their summary was not kept)."""

    # -- the worker ----------------------------------------------------------

    def busy(self) -> bool:
        """True while a request runs or the back-off after a failure lasts (``start`` would refuse)."""
        with self._lock:
            return self._busy()

    def _busy(self) -> bool:
        return (self._running is not None and not self._running.future.done()) or self._clock() < self._not_before

    def start(self, head: Sequence[Message], *, cwd: str | None = None) -> bool:
        """Start summarizing ``head`` unless closed, busy, or its latest summary covers exactly it.

        Returns whether a request was started.
        """
        prints = fingerprints(head)
        with self._lock:
            if self._closed or not head or self._busy():
                return False
            if self._latest is not None and self._latest.summary is not None and self._latest.prints == prints:
                return False
            job = _Job(self._generation, prints, concurrent.futures.Future())
            self._running = job
            self.requests += 1
            messages = without_recovered_content(head, self.recovery_tools)
            # A daemon thread: an exit that never called ``close`` does not wait on the model.
            self._thread = threading.Thread(
                target=self._work, args=(job, messages, cwd), name="compactor-background-summary", daemon=True
            )
            self._thread.start()
            return True

    def _work(self, job: _Job, messages: list[Message], cwd: str | None) -> None:
        job.future.set_running_or_notify_cancel()
        job.future.set_result(self._run(job, messages, cwd))

    def _run(self, job: _Job, messages: list[Message], cwd: str | None) -> _Outcome:
        retry_after: float | None = None
        try:
            spans: list[Span] = self.llm.spans(messages)
            summary = self.llm.summarize(messages, None, spans=spans, cwd=cwd)
            outcome = _Outcome(job.prints, summary, None)
        except Exception as exc:
            retry_after = retry_after_seconds(exc)
            outcome = _Outcome(job.prints, None, str(exc) or type(exc).__name__)
        with self._lock:
            if outcome.error is not None:
                wait = retry_after if retry_after is not None else self.settings.failure_backoff_seconds
                self._not_before = self._clock() + wait
                self._last_error = f"{outcome.error} (no new request for {wait:g} s)"
            else:
                self._last_error = None
            if job.generation == self._generation:
                self._latest = outcome
            else:
                self.discarded += 1
        return outcome

    def invalidate(self) -> None:
        """The conversation changed under the summaries (compacted, masked, replaced): forget them.

        A request in flight finishes, and its summary is discarded. A back-off stays.
        """
        with self._lock:
            self._generation += 1
            self._latest = None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no request runs (at most ``timeout`` seconds); True when none does."""
        with self._lock:
            job = self._running
        if job is None:
            return True
        try:
            job.future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def close(self) -> None:
        """Start no more requests and join the worker (the request in flight finishes first)."""
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    # -- at a compaction -----------------------------------------------------

    def choose(self, head: Sequence[Message], *, wait: float, cwd: str | None = None) -> Choice:
        """The summary a compaction of ``head`` uses, waiting at most ``wait`` seconds for one.

        Waits only when no finished summary fits and a request for the head's
        first messages is running (one is started when none runs).
        """
        prints, job = self._prepare(head, cwd)
        timed_out = False
        if job is not None and wait > 0:
            try:
                job.future.result(timeout=wait)
            except concurrent.futures.TimeoutError:
                timed_out = True
        return self._choice(prints, job, wait, timed_out=timed_out)

    async def achoose(self, head: Sequence[Message], *, wait: float, cwd: str | None = None) -> Choice:
        """``choose`` for an event loop: the wait is awaited, the loop keeps running."""
        prints, job = self._prepare(head, cwd)
        timed_out = False
        if job is not None and wait > 0:
            loop = asyncio.get_running_loop()
            finished = asyncio.Event()

            def wake(_: object) -> None:
                try:
                    loop.call_soon_threadsafe(finished.set)
                except RuntimeError:  # the loop has closed since: nobody waits any more
                    pass

            # Not ``asyncio.wrap_future``: cancelling its wrapper would cancel a request still queued.
            job.future.add_done_callback(wake)
            try:
                await asyncio.wait_for(finished.wait(), timeout=wait)
            except TimeoutError:
                timed_out = True
        return self._choice(prints, job, wait, timed_out=timed_out)

    def _prepare(self, head: Sequence[Message], cwd: str | None) -> tuple[tuple[bytes, ...], _Job | None]:
        """The head's fingerprints, and the request worth waiting for (None: a fitting summary is there)."""
        prints = fingerprints(head)
        with self._lock:
            if self._usable(prints) is not None:
                return prints, None
            job = self._running if self._running is not None and not self._running.future.done() else None
        if job is None:
            self.start(head, cwd=cwd)
            with self._lock:
                job = self._running if self._running is not None and not self._running.future.done() else None
        if job is None or job.generation != self._generation or not _is_prefix(job.prints, prints):
            return prints, None
        return prints, job

    def _usable(self, prints: Sequence[bytes]) -> _Outcome | None:
        latest = self._latest
        if latest is not None and latest.summary is not None and _is_prefix(latest.prints, prints):
            return latest
        return None

    def _choice(self, prints: tuple[bytes, ...], job: _Job | None, wait: float, *, timed_out: bool) -> Choice:
        with self._lock:
            usable = self._usable(prints)
            if usable is not None and usable.summary is not None:
                return Choice(usable.summary, len(usable.prints), "")
            latest, error = self._latest, self._last_error
        if error is not None:
            reason = f"the LLM summary failed: {error}"
        elif timed_out:
            reason = f"the background summary did not finish within {wait:g} s (background.max_wait_seconds)"
        elif latest is not None:
            reason = "the background summary no longer matches the conversation (it changed since)"
        elif job is not None or wait == 0:
            reason = "the background summary had not finished (background.max_wait_seconds is 0)"
        else:
            reason = "no background summary of this conversation yet"
        return Choice(None, 0, reason)


class BlendedSummarizer:
    """The summarizer of one compaction: a background summary's prefix, then extractive for the rest.

    ``extractive`` is the session's extractive summarizer, ``choice`` what
    ``BackgroundSummaries.choose`` found, ``llm_name`` the model summarizer's
    name. ``name`` is the model's when its summary is used, else the
    extractive summarizer's.
    """

    def __init__(self, extractive: CitingSummarizer, choice: Choice, *, llm_name: str) -> None:
        self.extractive = extractive
        self.choice = choice
        self.llm_name = llm_name
        self.name = extractive.name

    @property
    def lists_facts(self) -> bool:
        """Whether ``spans`` leaves the facts listing out when asked: when the extractive summarizer's does."""
        return getattr(self.extractive, "lists_facts", False) is True

    def spans(self, messages: Sequence[Message], *, listing: bool = True) -> list[Span]:
        """The extractive summarizer's spans of the whole head (every tool result a model may cite)."""
        if not listing and self.lists_facts:
            return self.extractive.spans(messages, listing=False)  # type: ignore[call-arg]
        return self.extractive.spans(messages)

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary:
        """The model's summary of the covered messages plus the extractive rendering of the newer ones.

        Raises:
            SummarizerError: the extractive summarizer failed (the pipeline fails closed).
        """
        spans = list(spans) if spans is not None else self.spans(messages)
        choice = self.choice
        last = len(messages) - 1
        model = choice.summary
        reason = choice.reason
        if model is not None:
            stored = {s.handle for s in spans}
            if choice.covered > len(messages):
                model, reason = None, "the background summary covers more than this head"
            elif any(h not in stored for h in model.handles):
                model, reason = None, "the background summary cites handles this compaction does not store"
        if model is None:
            summary = self.extractive.summarize(messages, instructions, spans=spans, cwd=cwd, ledger=ledger, tail=tail)
            source = SummarySource(
                source="extractive",
                first=0,
                last=max(last, 0),
                summarizer=self.extractive.name,
                reason=reason or "no background summary",
            )
            self.name = self.extractive.name
            return summary.model_copy(update={"sources": [source]})
        covered = choice.covered
        told = " (custom instructions apply to the extractive part only)" if instructions else ""
        sources = [
            SummarySource(
                source="llm",
                first=0,
                last=covered - 1,
                summarizer=self.llm_name,
                reason=f"summarized in the background before the compaction{told}",
            )
        ]
        newer = list(messages[covered:])
        extractive_text = index = ""
        sections = dict(model.sections)
        handles = list(model.handles)
        if newer:
            rest = self.extractive.summarize(newer, instructions, spans=spans, cwd=cwd, ledger=ledger, tail=tail)
            extractive_text, index = rest.text.strip(), rest.index
            sections.update(rest.sections)
            handles.extend(h for h in rest.handles if h not in handles)
            sources.append(
                SummarySource(
                    source="extractive",
                    first=covered,
                    last=last,
                    summarizer=self.extractive.name,
                    reason="newer than the background summary",
                )
            )
        text = render("background_summary.j2", llm=model.text.strip(), extractive=extractive_text, newer=len(newer))
        self.name = self.llm_name
        return Summary(
            text=text.strip(),
            summarizer=self.llm_name,
            sections=sections,
            handles=handles,
            dropped_rounds=model.dropped_rounds,
            sources=sources,
            index=index,
        )

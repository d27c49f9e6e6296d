"""Skill attachments: the current agent's invoked skills, newest first, cut to budget.

All accepted skills share one message (as Claude Code sends them), with one
report entry per skill. Each skill's section is cut to ``skill_tokens`` (tail
in CCR, with a note pointing at the skill's path); each skill is accepted in
order if the whole message stays within ``skills_total`` (one that does not
fit is skipped, and older, smaller skills are still checked).
"""

from __future__ import annotations

from attachments._cut import Cut, CutInfo, Render, TailStore, commit_cut, count_joined, plan_cut
from attachments.attachment import Attachment
from attachments.budgets import Budgets
from attachments.entries import AttachmentEntry, SkippedEntry
from attachments.errors import TailNotStored
from attachments.reasons import reason
from attachments.render import reminder_message, render_body, wrap
from attachments.state import AttachmentState
from ccr.tokens import TextCounter
from skills.invocations import InvokedSkill, invoked_skills

__all__ = ["build_skill_attachment"]

PRODUCER = "attachments.skill"


def build_skill_attachment(
    state: AttachmentState,
    *,
    budgets: Budgets,
    counter: TextCounter,
    store: TailStore,
) -> tuple[list[Attachment], list[SkippedEntry]]:
    """The skills attachment (none when no skill fits or none was invoked) and the skills left out.

    Only ``state.agent_id``'s skills are candidates: other agents' skills
    belong to other conversations and are neither attached nor reported.

    Raises:
        TailNotStored: the store's handles differ from the content handles
            and the message naming them no longer fits.
        Whatever the store raises when it refuses a cut tail (fail closed).
    """
    accepted: list[tuple[InvokedSkill, Cut, Render]] = []
    skipped: list[SkippedEntry] = []
    for skill in invoked_skills(state):
        render = _renderer(skill)
        plan = plan_cut(skill.content, render, limit=budgets.skill_tokens, counter=counter)
        if plan is None:
            skipped.append(
                SkippedEntry(
                    type="skill",
                    name=skill.name,
                    path=skill.path,
                    reason=reason(
                        "over_item_budget",
                        f"with none of it shown, its notes alone take more than the {budgets.skill_tokens:,} tokens "
                        "a skill may",
                    ),
                )
            )
            continue
        if (
            not _surely_fits(accepted, plan, budgets.skills_total)
            and _message_tokens([c for _, c, _ in accepted] + [plan], counter) > budgets.skills_total
        ):
            skipped.append(_over_total(skill, budgets, plan.tokens, accepted))
            continue  # as Claude Code does: an older, smaller skill may still fit
        accepted.append((skill, plan, render))
    if not accepted:
        return [], skipped

    committed = [
        (
            skill,
            commit_cut(
                plan,
                render,
                limit=plan.tokens,
                counter=counter,
                store=store,
                producer=PRODUCER,
                metadata={
                    "skill": skill.name,
                    "path": skill.path,
                    "kind": "skill_tail",
                    "session_id": state.session_id,
                },
            ),
        )
        for skill, plan, render in accepted
    ]
    text = _message_text([cut.text for _, cut in committed])
    tokens = _message_tokens([cut for _, cut in committed], counter)
    if tokens > budgets.skills_total:
        raise TailNotStored(
            f"the skills message naming the store's handles no longer fits {budgets.skills_total} tokens"
        )
    entries = [
        AttachmentEntry(
            type="skill",
            name=skill.name,
            path=skill.path,
            tokens=cut.tokens,
            truncated=cut.truncated,
            handle=cut.handle,
        )
        for skill, cut in committed
    ]
    attachment = Attachment(type="skill", message=reminder_message(text), tokens=tokens, entries=entries)
    return [attachment], skipped


def _renderer(skill: InvokedSkill) -> Render:
    def render(head: str, cut: CutInfo | None) -> str:
        return render_body("skill.j2", name=skill.name, path=skill.path, head=head, cut=cut)

    return render


_SURE_SHARE = 0.9
"""Sections whose counts sum to at most this share of the total fit without counting the message:
the wrapper and separators joining them cost far less than the rest."""


def _surely_fits(accepted: list[tuple[InvokedSkill, Cut, Render]], plan: Cut, total: int) -> bool:
    """Whether the skills message with ``plan`` added fits ``total`` for sure, by the sections' counts.

    Counting the whole message again for every skill added would tokenize
    the first skills once per later skill; the exact count is taken only
    near the total (and once at the end, for the attachment).
    """
    return sum(cut.tokens for _, cut, _ in accepted) + plan.tokens <= total * _SURE_SHARE


def _message_text(sections: list[str]) -> str:
    return wrap(render_body("skills.j2", sections=sections))


def _message_tokens(cuts: list[Cut], counter: TextCounter) -> int:
    """The count of the skills message holding ``cuts``, from their counts where the counter allows."""
    return count_joined(_message_text([cut.text for cut in cuts]), [(cut.text, cut.tokens) for cut in cuts], counter)


def _over_total(
    skill: InvokedSkill, budgets: Budgets, tokens: int, accepted: list[tuple[InvokedSkill, Cut, Render]]
) -> SkippedEntry:
    """Why a skill of ``tokens`` did not fit beside the newer skills ``accepted`` before it."""
    taken = sum(cut.tokens for _, cut, _ in accepted)
    why = (
        f"it takes {tokens:,} tokens, and the {len(accepted)} newer skills restored before it took {taken:,} "
        f"of the {budgets.skills_total:,} skill tokens"
    )
    return SkippedEntry(type="skill", name=skill.name, path=skill.path, reason=reason("over_total_budget", why))

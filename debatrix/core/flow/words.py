"""What the flow shows a coach, in words: a decision's figure as the model gave it, each measure's comment on a
debater and note on a speech (every claim with the ids it rests on, cited, never paraphrased), the sheet's status
words and lines, and the legend of the figures. Nothing here computes a verdict (:mod:`.measures` does, and says
which of these words each measure uses)."""

from __future__ import annotations

from collections.abc import Sequence

from debatrix.core.models import Debate

from .ledger import ARGUMENT_AT, PARTLY_AT, STATUS_ORDER, Cell, Ledger, SpeechFlow, Thread, figures_of, gist



def said_p(value: float, figures: str = "P") -> str:
    """One decision's figure as the model gave it: "P 0.70" from its probabilities; "yes" or "no" where its answer
    was taken as certain (a "P 1.00" there would be a probability it never gave); a share of sampled answers."""
    if figures == "answers":
        return "yes" if value == 1.0 else "no" if value == 0.0 else f"a share {value:.2f} of answers yes"
    if figures == "samples":
        return f"{value:.2f} of its sampled answers yes"
    return f"P {value:.2f}"


def said_mean(value: float, figures: str = "P") -> str:
    """A mean of decisions' figures in the same words: "mean P 0.62", "a share 0.50 of answers yes"."""
    return (f"a share {value:.2f} of answers yes" if figures == "answers" else
            f"a share {value:.2f} of sampled answers yes" if figures == "samples" else f"mean P {value:.2f}")


_ASKED = {"argues": "argues", "evidence": "has evidence", "clear": "reads clearly"}


def decision_words(decision: tuple[str, ...]) -> str:
    """One decision as a coach reads it: ("argues", "S3.1") is "whether S3.1 argues", ("answers", "S4.2", "S3.1")
    "whether S4.2 answers S3.1"."""
    if decision[0] == "answers":
        return f"whether {decision[1]} answers {decision[2]}"
    return f"whether {decision[1]} {_ASKED.get(decision[0], decision[0])}"


def unknown_words(flows: Sequence[SpeechFlow], most: int = 4) -> str:
    """The missing decisions as a coach reads them ("whether S3.1 argues, whether S4.2 answers S3.1")."""
    said = [decision_words(d) for f in flows for d in f.unknown]
    return ", ".join(said[:most]) + (f" and {len(said) - most} more" if len(said) > most else "")


# ------------------------------------------------------------------- what a coach reads: cited, never paraphrased

CITED = 4  # rows a comment names at most, the weightiest first


def _cite(t: Thread) -> str:
    return f"{t.id} “{gist(t.gist, 10)}”"


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids[:CITED]) + (f" and {len(ids) - CITED} more" if len(ids) > CITED else "")


def evidence_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    backed = [t for t in mine if (t.evidence or 0) >= 0.5]
    bare = [t.id for t in mine if (t.evidence or 0) < 0.5]
    text = ("Evidence behind " + "; ".join(f"{_cite(t)} ({said_p(t.evidence or 0.0, led.figures)})"
                                           for t in backed[:CITED])
            if backed else f"No argument of {debater} is more likely backed by evidence than not")
    return text + (f"; none likely behind {_ids(bare)}." if bare else ".")


def clash_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    index = debate.passage_index
    theirs = [t for t in led.threads if t.side is not debate.debater(debater).side and t.answerable
              and any(s.speaker == debater for s in debate.speeches[index[t.id].speech + 1:])]
    answered = [t for t in theirs if t.answered >= 0.5]
    left = [f"{t.speaker}'s {t.id}" for t in theirs if t.answered < 0.5]
    text = ("Answered " + "; ".join(f"{t.speaker}'s {_cite(t)} ({said_p(t.answered, led.figures)})"
                                    for t in answered[:CITED])
            if answered else f"{debater} answered none of the other side's arguments"
            if theirs else "Nothing of the other side came before their speeches")
    return text + (f"; left unanswered: {_ids(left)}" if left else "") + \
        f". Their own arguments standing: {_ids([t.id for t in mine if t.stands >= 0.5]) or 'none'}."


def standing_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    standing = [t for t in mine if t.status != "refuted"]
    fallen = [t for t in mine if t.status == "refuted"]
    index = debate.passage_index

    def weight(c: Cell) -> float:
        return c.counted

    def whose(pid: str) -> str:  # another debater's passage, named as theirs (from the table)
        return f"{index[pid].speaker}'s {pid}" if pid in index else pid

    tested = led.tally(debater).tested

    def why(t: Thread) -> str:  # what kept a row standing, where the other side spoke after it
        if not t.answerable:
            return (" (untested: the other side spoke no later speech that could answer it; it counts "
                    f"{tested:.2f} of its weight, as {debater}'s tested arguments stood)")
        if t.status == "extended":
            by = sorted({c.by for c in t.cells if c.by and weight(c) > 0})
            return (f" (extended: the answer{'s' if len(by) > 1 else ''} {', '.join(whose(b) for b in by)} "
                    "answered in turn)")
        if t.status not in ("dropped", "contested"):
            return ""
        # never asked: no later passage of the other side was proposed for it, so nobody judged an answer
        if not t.cells:
            return " (dropped: no later passage of the other side was asked about it)"
        best = max(t.cells, key=weight)
        short = (f"short of {PARTLY_AT:.1f}: left unanswered" if t.status == "dropped" else
                 "short of even odds: answered only in part")
        return (f" ({t.status}: asked whether {whose(best.by) if best.by else 'speech ' + str(best.speech + 1)} "
                f"answers it, the model said {said_p(best.answered, led.figures)}" + ("" if best.counts is None or
                                                              abs(best.counts - best.answered) < 0.005 else
                                                              f", {weight(best):.2f} on its profile") +
                f"; together its answers count {t.answered:.2f} of 1, {short})")

    text = ("Standing: " + "; ".join(f"{_cite(t)}{why(t)}" for t in standing[:CITED]) if standing
            else "No argument left standing")
    if fallen:  # each with the passages that most likely answered it
        text += "; refuted by the other side: " + "; ".join(
            f"{t.id} (by " + ", ".join(f"{whose(c.by) if c.by else 'speech ' + str(c.speech + 1)} at "
                                     f"{said_p(c.answered, led.figures)}"
                                     for c in sorted(t.cells, key=lambda c: -weight(c))[:2] if weight(c) > 0) + ")"
            for t in fallen[:CITED])
    return text + "."


def standing_words(led: Ledger, debater: str) -> str:
    """How many of a debater's arguments stand, counted as a coach counts rows: "2 of 3 arguments standing" (a row
    stands unless it was refuted: :attr:`Thread.status`)."""
    rows = [x for x in led.threads if x.speaker == debater]
    up = sum(x.status != "refuted" for x in rows)
    return f"{up} of {len(rows)} argument{'' if len(rows) == 1 else 's'} standing"


def tally_line(led: Ledger, debater: str) -> str:
    """One debater's rows by status, as the summary, the report and the page all print it: "Ana: 1 of 2
    arguments standing; untested S3.1; refuted S1.1" (statuses from :attr:`Thread.status`, in
    :data:`STATUS_ORDER`)."""
    groups = {s: [x.id for x in led.threads if x.speaker == debater and x.status == s] for s in STATUS_ORDER}
    unknown = led.tally(debater).unknown
    return f"{debater}: {standing_words(led, debater)}" + "".join(
        f"; {status} {', '.join(ids)}" for status, ids in groups.items() if ids) + (
        f"; not counted {', '.join(unknown)} (whether {'it argues' if len(unknown) == 1 else 'they argue'} is "
        "missing)" if unknown else "")


def weighed_line(led: Ledger) -> str:
    """What the verdict weighs beside the counts, as every surface prints it: each argument by how likely it is one
    and each answer by how much surer than the model's usual answer it is, the model's P read through its profile
    where it has one (:meth:`JudgeProfile.telling`)."""
    return ("The verdict weighs each argument by how likely it is one, and each answer by how much surer it is than "
            "the model's usual answer, as the model's profile reads its P (unprofiled: as the model gave it): " +
            ", ".join(f"{t.debater} {t.standing:.1f} of {t.arguments:.1f} standing" for t in led.tallies) + "." +
            "".join(
        f" {t.debater}'s untested arguments (weighed {t.untested:.1f}: no later speech of the other side could "
        f"answer them) count {t.tested:.2f} of their weight, as {t.debater}'s tested arguments stood."
        for t in led.tallies if t.untested > 0))


def answer_words(cell: Cell, word: str, base: float | None = None, figures: str = "P") -> tuple[str, str]:
    """A sheet cell in words (what a coach reads: its ``word``, decided with its row by :func:`.ledger.reading`,
    the answering passage, and who set it where a person did) and its figures (shown on hover): the model's answer
    and what it counts (the model's P through its profile; a result of 1.8 or 1.9: its share above that debate's
    mean answer ``base``; a person's value as given)."""
    words = word + (f" by {cell.by}" if cell.by and word not in ("asked, not answered", "could not tell") else "")
    if cell.set_by:
        model = ("the model was never asked" if cell.model is None else
                 f"the model said {said_p(cell.model, figures)}")
        return (f"{words} (set by {cell.set_by})",
                f"set by {cell.set_by}: {cell.answered:.2f}; {model}; counts {cell.counted:.2f} of 1 toward "
                "felling the row")
    shown = ((f"P(it answers) {cell.answered:.2f}" if figures == "P" else
              f"does it answer? {said_p(cell.answered, figures)}")
             + (f"; that debate's mean answer {base:.2f}" if base is not None else "")
             + (f"; {cell.factor:.2f} times the odds of the model's usual answer" if cell.factor is not None else "")
             + f"; counts {cell.counted:.2f} of 1 toward felling the row")
    return words, shown


def own_range(debate: Debate, speech: int) -> str:
    ids = [p.id for p in debate.passages if p.speech == speech]
    return ids[0] if len(ids) == 1 else f"{ids[0]}–{ids[-1]}"


#: what the figures of :func:`flow_line` are, said wherever it is shown
FLOW_LINE_LEGEND = ("P: the model's probability, 0 to 1, that the passage is an argument about the motion, cites "
                    "evidence, reads clearly, or answers that earlier point (a question asked, with the model's "
                    "answer: the flow sheet shows what it came to once read through the model's profile)")


def flow_line(flow: SpeechFlow) -> str:
    """One speech's decisions by id, as the page shows them while the judge reads (:data:`FLOW_LINE_LEGEND`
    says what the figures are): "S2.1 argument P 0.16 · S2.1 answers S1.1? P 0.70" (a question asked, with the
    model's answer: the sheet says what it came to)."""
    figures = figures_of([flow])
    parts = [f"{m.id} " + ", ".join(f"{name} {said_p(value, figures)}" for name, value in
                                    (("argument", m.argument), ("evidence", m.evidence), ("clear", m.clear))
                                    if value is not None)
             for m in flow.marks if m.argument is not None or m.evidence is not None or m.clear is not None]
    parts += [f"{x.by or 'it'} answers {x.target}? {said_p(x.answers, figures)}" for x in flow.lines]
    return " · ".join(parts) + (f" · missing: {flow.missing}" if flow.missing else "")


def argued_note(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: argument {_decision_figure(m.argument, figures)}" for m in flow.marks
            if m.argument is not None]


def _decision_figure(value: float, figures: str) -> str:
    """A decision's figure in a speech's note: the probability itself ("0.16"), or the answer where that is what
    the model gave (:func:`said_p`)."""
    return f"{value:.2f}" if figures == "P" else said_p(value, figures)


def answered_note(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return ["; ".join(f"{x.by or 'it'} answers {index[x.target].speaker}'s {x.target}? {said_p(x.answers, figures)}"
                      for x in flow.lines)] if flow.lines else []


def evidenced_note(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: evidence {_decision_figure(m.evidence, figures)}" for m in flow.marks
            if m.argument is not None and m.evidence is not None and m.argument >= ARGUMENT_AT] or [
        "no passage of it reads as an argument"]


def engaged_note(flow: SpeechFlow, debate: Debate) -> list[str]:
    return answered_note(flow, debate) or [
        "asked about no earlier argument of the other side" if flow.index else "the first speech"]


def cleared_note(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: reads clearly {_decision_figure(m.clear, figures)}" for m in flow.marks
            if m.clear is not None] or ["no passage of it was asked whether it reads clearly"]


def clear_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    t = led.tally(debater)
    if not t.passages:
        return f"No passage of {debater} was asked whether it reads clearly."
    return (f"{t.clear:.1f} of their {t.passages} passages read clearly "
            f"({said_mean(t.clear / t.passages, led.figures)}).")

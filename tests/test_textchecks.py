"""The checks of what the judge wrote (debatrix.graphs.finish): lookups on constructed texts and flows, and the
split of a prose judgment into per-debater comments. The checks measure; none of them changes the text shown."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from hypothesis import given, settings as hsettings, strategies as st

from debatrix.graphs import finish as T
from debatrix.core.models import Debate, Debater, DebaterJudgment, Side, Speech, SpeechAnalysis
from debatrix.core.results import DimensionResult, JudgeResult, cited
from debatrix.graphs.prose.verdicts import debater_paragraph

ANA = ("Tired staff make mistakes. Trials in Iceland and the UK kept output level while sick days and burnout fell. "
       "A shorter week attracts and keeps staff.")
BEN = ("The trials Ana cites were mostly office teams that chose to take part. Hospitals run on shifts, so a shorter "
       "week means hiring more people we cannot find.")
DEBATE = Debate(id="t", motion="This house would move public-sector workers to a four-day week.",
                debaters=(Debater(name="Ana", side=Side.PRO), Debater(name="Ben", side=Side.CON)),
                speeches=(Speech(speaker="Ana", content=ANA), Speech(speaker="Ben", content=BEN)))

def test_a_repeated_analysis_with_the_name_swapped_is_a_copy():
    first = "Ana's argument is that a shorter week attracts and keeps staff and saves the cost of hiring."
    swapped = first.replace("Ana", "Ben")
    own = "Ben says the trials were office teams that chose to take part, so they prove little for hospitals."
    checks = T.check_analyses(DEBATE, "argument", [(0, "Ana", first), (1, "Ben", swapped)])
    assert checks[1].copied and checks[1].copy_of == 0 and checks[1].copy_share > 0.9
    assert not T.check_analyses(DEBATE, "argument", [(0, "Ana", first), (1, "Ben", own)])[1].copied
    assert T.shared_share("", first) == 0.0  # no 5-grams: nothing shared

def test_grounding_tells_the_own_speech_from_the_others():
    about_ben = "Ben notes the trials were office teams that chose to take part; hospitals run on shifts."
    about_ana = "Ben claims trials in Iceland and the UK kept output level while sick days fell."
    own, foreign, n = T.grounding(about_ben, BEN, [ANA])
    assert n > 0 and own > 0.3 and foreign == 0.0
    own2, foreign2, _ = T.grounding(about_ana, BEN, [ANA])
    assert own2 == 0.0 and foreign2 > 0.3
    assert T.grounding("the of and", BEN, [ANA]) == (0.0, 0.0, 0)

def test_quotations_are_found_word_for_word_only():
    text = ('Ben: "The trials Ana cites were mostly office teams" and “hospitals run on shifts” but "trials were '
            'useless" is not his; "office" is a term, not a quotation.')
    qs = T.quotes(text)
    assert qs == ["the trials ana cites were mostly office teams", "hospitals run on shifts", "trials were useless"]
    assert [T.quote_found(q, BEN) for q in qs] == [True, True, False]
    assert T.quote_found("The trials Ana cites ... hospitals run on shifts", BEN)  # an ellipsis joins two parts
    assert not T.quote_found("The trials Ana cites ... hospitals never run", BEN)

def test_a_reason_made_of_weights_cites_nothing_said():
    assert not T.cites_debate("The final decision is Ana, as she has the highest weight of 3 out of 5.", DEBATE)
    assert not T.cites_debate("Ana wins the four-day week debate.", DEBATE)  # the motion's words are not a point
    assert T.cites_debate("Ana wins: Ben never answered that burnout fell in the Iceland trials.", DEBATE)

# Real judgments of qwen2.5-coder-1.5b (the demo, before the fix): a name on its own line, the Winner line between
# the paragraphs, Markdown bold names. Each debater's comment must be its own paragraph, never the other's.
REAL_NAME_ALONE = """Ana:
Ana's argument is strong and well-supported by the evidence provided. She argues that a four-day week with no loss of pay would attract and keep staff.

Winner: Ana

Ben:
Ben argued that four-day weeks reduced errors and improved output levels, citing studies from Iceland and the UK."""
REAL_ONE_SIDED = """Ana:
Ana's argument is strong and well-supported by the evidence provided. Ana's rebuttals are also strong."""
REAL_BOLD = """**Alec**: The US military defends economic freedom and deters aggression.
**blamonkey** - Argued that the budget is bloated and cited the GAO audit.
Winner: blamonkey"""


def test_per_debater_comments_from_real_judgments():
    names = ["Ana", "Ben"]
    assert debater_paragraph(REAL_NAME_ALONE, "Ana", names).startswith("Ana's argument is strong")
    assert "Winner" not in debater_paragraph(REAL_NAME_ALONE, "Ana", names)
    assert debater_paragraph(REAL_NAME_ALONE, "Ben", names).startswith("Ben argued that four-day weeks")
    # the judgment says nothing on Ben: his comment is empty, not Ana's paragraph nor the whole judgment
    assert debater_paragraph(REAL_ONE_SIDED, "Ben", names) == ""
    bold = ["Alec", "blamonkey"]
    assert debater_paragraph(REAL_BOLD, "Alec", bold) == "The US military defends economic freedom and deters aggression."
    assert debater_paragraph(REAL_BOLD, "blamonkey", bold) == "Argued that the budget is bloated and cited the GAO audit."
    # a name that starts another name's spelling is not mistaken for it
    assert debater_paragraph("Alexandra: strong.\nAl: weak.", "Al", ["Al", "Alexandra"]) == "weak."
    # debateart_0601, the local model's argument judgment: its Winner line run into the paragraph's last sentence
    inline = ("Bazza97125: I strongly argue that animal testing is not effective. I do not provide any rebuttals. "
              "Winner: Brendo")
    assert debater_paragraph(inline, "Bazza97125", ["Bazza97125", "Brendo"]) == (
        "I strongly argue that animal testing is not effective. I do not provide any rebuttals.")
    # the demo's source judgment: each paragraph headed "<name> Winner:"
    headed = ("Ana Winner: Ana used sources more reliably and effectively.\n"
              "Ben Winner: Ben did not rely on sources.\nWinner: Ana")
    assert debater_paragraph(headed, "Ana", ["Ana", "Ben"]) == "Ana used sources more reliably and effectively."
    assert debater_paragraph(headed, "Ben", ["Ana", "Ben"]) == "Ben did not rely on sources."

def test_quotable_passages_are_the_speakers_own_sentences():
    from debatrix.core.prompting import quotable_passages

    text = ("Tired staff make mistakes. Yes. Rotas can be redesigned, as Scottish trials are doing, and overtime is "
            "already what burnout costs us today in every single ward of the country.\n"
            "> POI from Ben: where is the evidence for that?\nTired staff make mistakes.")
    assert quotable_passages(text) == [
        "Tired staff make mistakes.",  # once, though said twice
        # a long sentence is split at a clause break, so a passage stays within 18 words
        "Rotas can be redesigned, as Scottish trials are doing,",
        "and overtime is already what burnout costs us today in every single ward of the country.",
    ]  # "Yes." is too short to quote; the point of information is Ben's words, not the speaker's

def test_a_note_broken_off_on_a_word_no_sentence_ends_on_is_cut_back():
    from debatrix.graphs.prose.answers import analysis_answer

    schema = analysis_answer(("Tired staff make mistakes.",), "Ana", first=True, words=60)

    def shown(note: str) -> str:
        return schema.model_validate({"points": [{"quote": "Tired staff make mistakes.", "note": note}]}).text()[1]

    # the demo's language note (real output) ends "a strong and.": back to its last clause
    assert shown("Ana uses clear and concise phrases to state the problem, which is a strong and.") == (
        "Ana uses clear and concise phrases to state the problem.")
    # no clause to go back to (a text-benchmark note, real output): the broken words go, the cut is marked
    assert shown("Ana uses the word 'therefore' to connect the argument to the.") == (
        "Ana uses the word 'therefore' to connect the argument …")
    assert shown("Ana says tired staff make mistakes") == "Ana says tired staff make mistakes."  # whole: kept


# ---------------------------------------------------------------- properties of the lookups

prose = st.lists(st.sampled_from("tired staff make mistakes trials iceland output level burnout fell hospitals "
                                 "shifts rotas wards hiring people office teams chose part".split()),
                 min_size=8, max_size=40)


@hsettings(max_examples=60, deadline=None)
@given(prose, st.data())
def test_any_run_of_a_speech_is_found_and_a_word_it_lacks_is_not(source, data):
    text = " ".join(source)
    start = data.draw(st.integers(0, len(source) - 3))
    end = data.draw(st.integers(start + 3, len(source)))
    run = " ".join(source[start:end])
    assert T.quote_found(run.upper() + ".", text)  # case and punctuation aside
    assert T.quotes(f'He said "{run}" there.') == [run]
    assert not T.quote_found(f"{run} zeppelin", text)  # a word the speech never says


@hsettings(max_examples=60, deadline=None)
@given(prose, prose)
def test_copy_and_grounding_are_shares_and_read_only_the_texts(a, b):
    one, two = " ".join(a), " ".join(b)
    assert T.shared_share(one, one) == 1.0 or len(a) < T.COPY_N
    assert 0.0 <= T.shared_share(one, two) <= 1.0
    own, foreign, n = T.grounding(one, one, [two])
    assert foreign == 0.0 and (own == 1.0 or n == 0)  # a text is grounded in itself, nothing foreign about it
    own, foreign, n = T.grounding(one, "", [one])
    assert own == 0.0 and (foreign == 1.0 or n == 0)  # found only elsewhere: all of it foreign


def _result(d: Debate, mode: str, analyses=(), comments=None, ledger=None) -> JudgeResult:
    return JudgeResult(debatrix_version="t", debate_id=d.id, motion=d.motion, format=d.format, mode=mode,
                       status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                       dimensions=(DimensionResult(
                           name="argument", weight=1, allow_tie=False, ledger=ledger,
                           analyses=tuple(SpeechAnalysis(dimension="argument", index=i, speaker=s, analysis=t)
                                          for i, s, t in analyses),
                           debater_judgments=tuple(DebaterJudgment(dimension="argument", debater=n, comment=c,
                                                                   score=5) for n, c in (comments or {}).items())),))


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 5)), max_size=6), st.sampled_from(["Ana", "Ben"]))
def test_an_id_is_unknown_exactly_when_the_table_lacks_it_and_foreign_when_another_speaker_said_it(ids, who):
    table = DEBATE.passage_index
    text = " ".join(f"S{s}.{p}" for s, p in ids)
    own, unknown, foreign = cited(text, DEBATE, who)
    for s, p in ids:
        pid = f"S{s}.{p}"
        assert (pid in unknown) == (pid not in table)
        if pid in table:
            assert (pid in own) == (table[pid].speaker == who) and (pid in foreign) == (table[pid].speaker != who)
    # given to its speaker by name, another's passage is not foreign
    named = " ".join(f"{table[pid].speaker}'s {pid}" for pid in table)
    assert cited(named, DEBATE, who)[2] == []


def test_a_flow_is_checked_by_id_and_a_prose_result_by_measurement():
    flow = _result(DEBATE, "flow", [(0, "Ana", "S1.1 standing; S2.1 answers it.")],
                   {"Ana": "Standing: S1.1.", "Ben": "Nothing of theirs."})
    checks = T.check_result(flow, DEBATE)
    [a] = checks.analyses
    assert a.by_id and a.foreign_ids == ("S2.1",) and a.misattributed
    assert {c.debater: c.own_cited for c in checks.comments} == {"Ana": 1, "Ben": 0}
    assert "argument comment on Ben cites none of their passages" in checks.flags
    # the same text read as prose: no ids looked up, so nothing said of misattribution (None, not a False no one
    # checked)
    prose = T.check_result(flow.model_copy(update={"mode": "debatrix"}), DEBATE)
    assert prose.analyses[0].misattributed is None and prose.comments[0].misattributed is None


def test_a_result_written_with_the_retired_checks_still_loads():
    old = {"dimension": "argument", "index": 0, "speaker": "Ana", "words": 4, "names_other_only": True,
           "wrong_sides": ["Ana"], "restates": [], "answers_misread": [], "notes": 2}
    from debatrix.core.results import AnalysisCheck, CommentCheck

    assert AnalysisCheck.model_validate(old).misattributed is None
    assert CommentCheck.model_validate({"dimension": "argument", "debater": "Ana", "first_person": True}).debater


def test_feedback_benchmark_adds_up_the_checks_per_dimension():
    from debatrix.benchmarks.feedback import Feedback

    def col(n, copied, grounded, foreign, quotes, found, by_id=0, wrong=0):
        return {"n": n, "prose": n - by_id, "by_id": by_id, "copied": copied, "misattributed": wrong, "unknown": 0,
                "cut": 0.0, "grounded": grounded, "foreign": foreign, "words": 40 * n, "quotes": quotes,
                "quotes_found": found}

    records = [
        {"status": "complete", "pred": {"dimensions": {"argument": col(4, 3, 0.4, 0.8, 0, 0),
                                                       "language": col(4, 0, 1.2, 0.0, 8, 8)},
                                        "consistent": {"argument": True, "general": False},
                                        "comments": [None, None], "empty_comments": [False, True],
                                        "panel_grounded": False}},
        {"status": "complete", "pred": {"dimensions": {"argument": col(2, 0, 1.0, 0.0, 4, 2)},
                                        "consistent": {"argument": True}, "comments": [None, None],
                                        "empty_comments": [False, False], "panel_grounded": True}},
        {"status": "complete", "pred": {"dimensions": {"argument": col(3, 0, 0, 0, 0, 0, by_id=3, wrong=1)},
                                        "consistent": {}, "comments": [True, False, False, False],
                                        "uncited_comments": [False, True, False, False],
                                        "empty_comments": [], "panel_grounded": None}},
        {"status": "incomplete", "pred": {}},
    ]
    rows = {r.metric: (r.value, r.n) for r in Feedback().metrics(records)}
    # the n-gram measurements count the prose analyses only; the id lookups the flow's only
    assert rows["copy_rate_argument"] == (0.5, 6) and rows["copy_rate_language"] == (0.0, 4)
    assert rows["copy_rate_all"] == (0.3, 10)
    assert rows["misattributed_argument"] == (1 / 3, 3) and "misattributed_language" not in rows
    assert rows["grounded_argument"][0] == 1.4 / 6 and rows["foreign_argument"][0] == 0.8 / 6
    assert rows["quotes_found_argument"] == (0.5, 4) and rows["quotes_found_all"] == (10 / 12, 12)
    assert rows["grounded_above_foreign_argument"] == (0.5, 2)  # per prose column: one of the two
    assert rows["consistent_all"] == (2 / 3, 3)
    assert rows["comment_misattributed_all"] == (0.25, 4) and rows["comment_uncited_all"] == (0.25, 4)
    assert rows["comment_empty_all"] == (0.25, 4)
    assert rows["panel_cites_debate"] == (0.5, 2)
    assert rows["words_per_analysis_all"] == (40.0, 13)


def test_a_prose_result_is_flagged_and_shown_as_the_model_wrote_it(uniforms):
    """A copied analysis, a note made of the other debater's speech, a paragraph missing and a reason made of
    weights are flagged in words; and what the model wrote is shown whole (the checks delete nothing)."""
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel, analysis_of

    from .conftest import settings

    maya = " ".join(uniforms.speeches[0].content.split()[:30]).replace('"', "")
    same = ("makes the same point about uniforms and bullying that every speech makes, with the same words, the "
            "same examples and the same conclusion about costs for families, identity and learning in school.")

    def analysed(c):  # Theo's first speech noted with Maya's words; the others alike
        return analysis_of(c, note=f"Theo says {maya}" if c.index == 1 else f"{c.target} {same}")

    model = ScriptedChatModel(script={
        "analyze_speech": analysed,
        "judge_debate": lambda c: "Maya:\nShe argues against requiring school uniforms.\nWinner: Maya"
        if c.dimension == "source" else f"Maya argued on {c.dimension}.\nWinner: Maya",
        "panel_comment": "The final decision is Maya, as she has the highest weight of 3 out of 7.\nWinner: Maya",
        "decide_debate": lambda c: {**{n: 6 for n in c.names}, "winner": "Maya"},
        "panel_decide": {"winner": "Maya"}})
    result = asyncio.run(ajudge_debate(uniforms, settings("debatrix"), model))
    flags = result.checks.flags
    assert any("argument, speech 3 (Maya): repeats the analysis of speech 1" in f for f in flags)
    assert any(f.startswith("argument, speech 2 (Theo): more of its phrases are from other speeches") for f in flags)
    assert "argument: the judgment has no paragraph on Theo" in flags
    assert "panel: the reason cites nothing said in the debate" in flags
    assert result.checks.panel_grounded is False
    # shown as written: the borrowed note, and the sentence a side-verb list used to delete
    # (cut back to its last whole clause at the note's length limit, as any note is)
    assert "Theo says Uniforms put the focus of a school day back on learning. When every student" in (
        result.dimension("argument").analyses[1].analysis)
    assert [j.comment for j in result.dimension("source").debater_judgments][0] == (
        "She argues against requiring school uniforms.")


def test_the_mode_says_whether_a_panel_wrote_the_reason_not_the_usage_table(uniforms):
    """A whole-debate mode without a panel has no panel's reason to check, whatever its nodes were called; a result
    of a mode no longer registered is read by its shape (several dimensions and no ledger: a panel's)."""
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    model = ScriptedChatModel(script={"decide_debate": lambda c: {**{n: 6 for n in c.names}, "winner": "Maya"},
                                      "judge_debate": "It was close.\nWinner: Maya"})
    direct = asyncio.run(ajudge_debate(uniforms, settings("direct", orders=1), model))
    assert direct.status.value == "complete" and direct.checks.panel_grounded is None
    old = direct.model_copy(update={"mode": "retired", "dimensions": direct.dimensions * 2})
    assert T.check_result(old, uniforms).panel_grounded is False  # "It was close." cites nothing said


def test_grounding_needs_no_word_list_in_any_script():
    """The function words are the debate's own most frequent ones, so an analysis that restates a speech is grounded
    in it, and not in the other, in Chinese, Russian and Arabic as in English (the English list this replaced left
    every Chinese character out, and kept every Russian function word in)."""
    from .many_scripts import two_rounds

    for language in ("zh", "ru", "ar", "en"):
        debate = two_rounds(language)
        first, second = (s.content for s in debate.speeches[:2])
        about_first = " ".join(first.split("\n")[0].split()[:30]) if " " in first else first[:60]
        own, foreign, n = T.grounding(about_first, first, [second])
        assert n > 0 and own > 0.5 and foreign == 0.0, (language, own, foreign, n)
        own, foreign, n = T.grounding(about_first, second, [first])
        assert own < 0.5 < foreign, (language, own, foreign)
        function = T.function_words([first, second])
        assert function and not set(T.content_words(about_first, function)) <= function

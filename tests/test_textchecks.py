"""The checks of what the judge wrote (debatrix.core.textchecks) on hand-made texts, and the split of a judgment
into per-debater comments on real model output."""

from __future__ import annotations

from debatrix.core import textchecks as T
from debatrix.core.models import Debate, Debater, Side, Speech
from debatrix.graphs.verdicts import debater_paragraph

ANA = ("Tired staff make mistakes. Trials in Iceland and the UK kept output level while sick days and burnout fell. "
       "A shorter week attracts and keeps staff.")
BEN = ("The trials Ana cites were mostly office teams that chose to take part. Hospitals run on shifts, so a shorter "
       "week means hiring more people we cannot find.")
DEBATE = Debate(id="t", motion="This house would move public-sector workers to a four-day week.",
                debaters=(Debater(name="Ana", side=Side.PRO), Debater(name="Ben", side=Side.CON)),
                speeches=(Speech(speaker="Ana", content=ANA), Speech(speaker="Ben", content=BEN)))


# debateart_0466's motion and debaters (Alec for, blamonkey against)
MILITARY = Debate(id="m", motion="The US should increase military spending.",
                  debaters=(Debater(name="Alec", side=Side.PRO), Debater(name="blamonkey", side=Side.CON)),
                  speeches=(Speech(speaker="Alec", content="More."), Speech(speaker="blamonkey", content="Less.")))


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


def test_misattribution_names_the_other_debater_or_the_wrong_side():
    checks = T.check_analyses(DEBATE, "argument", [
        (0, "Ana", "Ana argues a shorter week keeps staff."),
        (1, "Ben", "Ana's argument is that a shorter week keeps staff."),  # about the other debater only
        (1, "Ben", "Ben supports the motion with hiring figures."),  # Ben opposed it
    ])
    assert [c.names_other_only for c in checks] == [False, True, False]
    assert [c.wrong_sides for c in checks] == [(), (), ("Ben",)]
    assert [c.misattributed for c in checks] == [False, True, True]
    # a sentence naming both debaters is never held against either
    assert T.wrong_sides("Ana supports the motion while Ben is against the motion.", DEBATE) == []
    assert T.wrong_sides("Ana is against the motion.", DEBATE) == ["Ana"]
    assert T.mentions("Ana's case", "Ana") and not T.mentions("Banana bread", "Ana")


def test_a_point_credited_to_the_opponent_puts_its_debater_on_the_wrong_side(four_day_week):
    # the demo's source comment on Ana (pro), real output: her Scottish trial given to Ben's case
    real = ("Ana also cited a Scottish trial that found that overtime is already what burnout costs us today, which "
            "supports Ben's argument that redesigning rotas is a promise, but not a plan.")
    assert T.wrong_sides(real, four_day_week) == ["Ana"]
    assert T.sentence_faults(real, four_day_week, "Ana").misattributed
    assert T.wrong_sides("Ana cited a trial. It strengthens Ben's case.", DEBATE) == ["Ana"]  # the last one named
    # the same note cut at its length cap right after the name (the demo's source analysis, real output)
    cut = ("Ana cites a Scottish trial that found that overtime is already what burnout costs us today, which supports "
           "Ben's …")
    assert T.wrong_sides(cut, four_day_week) == ["Ana"]
    assert T.note_faults([cut], four_day_week, 2)[0].wrong_side
    # a debater's own or a teammate's argument, a weakened one, a negated one: no side taken
    assert T.wrong_sides("Ben cites hospitals, which supports Ben's argument.", DEBATE) == []
    assert T.wrong_sides("Ben's rebuttal undermines Ana's argument.", DEBATE) == []
    assert T.wrong_sides("Ana cited a trial, which does not support Ben's argument.", DEBATE) == []


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


def test_feedback_benchmark_adds_up_the_checks_per_dimension():
    from debatrix.benchmarks.feedback import Feedback

    def col(n, copied, grounded, foreign, quotes, found):
        return {"n": n, "copied": copied, "misattributed": 0, "cut": 0.0, "grounded": grounded,
                "foreign": foreign, "words": 40 * n, "quotes": quotes, "quotes_found": found}

    records = [
        {"status": "complete", "pred": {"dimensions": {"argument": col(4, 3, 0.4, 0.8, 0, 0),
                                                       "language": col(4, 0, 1.2, 0.0, 8, 8)},
                                        "consistent": {"argument": True, "general": False},
                                        "comments": [True, False], "empty_comments": [False, True],
                                        "panel_grounded": False}},
        {"status": "complete", "pred": {"dimensions": {"argument": col(2, 0, 1.0, 0.0, 4, 2)},
                                        "consistent": {"argument": True}, "comments": [False, False],
                                        "empty_comments": [False, False], "panel_grounded": True}},
        {"status": "incomplete", "pred": {}},
    ]
    rows = {r.metric: (r.value, r.n) for r in Feedback().metrics(records)}
    assert rows["copy_rate_argument"] == (0.5, 6) and rows["copy_rate_language"] == (0.0, 4)
    assert rows["copy_rate_all"] == (0.3, 10)
    assert rows["grounded_argument"][0] == 1.4 / 6 and rows["foreign_argument"][0] == 0.8 / 6
    assert rows["quotes_found_argument"] == (0.5, 4) and rows["quotes_found_all"] == (10 / 12, 12)
    assert rows["grounded_above_foreign_argument"] == (0.5, 2)  # per column: one of the two argument columns
    assert rows["consistent_all"] == (2 / 3, 3)
    assert rows["comment_misattributed_all"] == (0.25, 4) and rows["comment_empty_all"] == (0.25, 4)
    assert rows["panel_cites_debate"] == (0.5, 2)
    assert rows["words_per_analysis_all"] == (40.0, 10)


def test_words_glued_to_dodge_the_repeat_penalty_are_split_again():
    source = "Trials kept output level while sick days and burnout fell; a four-day week is necessary."
    glued = "Ben says trials kept  outputlevel while burnoutfell, so a four-Dayweek isnecessary in Reykjavik."
    assert T.unglued(glued, source) == ("Ben says trials kept output level while burnout fell, so a four-Day week "
                                        "is necessary in Reykjavik.")
    assert T.unglued("a necessary output", source) == "a necessary output"  # real words are left alone


def test_result_flags_name_what_to_distrust(uniforms):
    """On a whole result: a copied analysis, a comment missing for a debater and a panel reason made of weights
    are flagged in words."""
    import asyncio

    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel, analysis_of

    from .conftest import settings

    def judged(c):  # every debater's paragraph but Theo's; in the source column Maya's, with her on the wrong side
        if c.dimension == "source":
            return "Maya:\nShe argues against requiring school uniforms in public secondary schools.\nWinner: Maya"
        return f"Maya argued on {c.dimension}.\nWinner: Maya"

    model = ScriptedChatModel(script={
        "analyze_speech": lambda c: analysis_of(c, note=f"{c.target} makes the same point about uniforms and "
                                                        "bullying that every speech makes, with the same words, "
                                                        "the same examples and the same conclusion about costs "
                                                        "for families, identity and learning in school."),
        "judge_debate": judged,
        "panel_comment": "The final decision is Maya, as she has the highest weight of 3 out of 7.\nWinner: Maya",
        "decide_debate": lambda c: {**{n: 6 for n in c.names}, "winner": "Maya"},
        "panel_decide": {"winner": "Maya"}})
    result = asyncio.run(ajudge_debate(uniforms, settings("debatrix"), model))
    flags = result.checks.flags
    assert any("argument, speech 3 (Maya): repeats the analysis of speech 1" in f for f in flags)
    assert "argument: the judgment has no paragraph on Theo" in flags
    assert "panel: the reason cites nothing said in the debate" in flags
    # a comment's sentences that name no one speak of its debater: one putting her on the wrong side is left out
    # of what is shown (the order's answer keeps it), which leaves no paragraph on her
    assert "source: the judgment has no paragraph on Maya" in flags
    assert "argues against requiring" in result.dimension("source").verdict.orders[0].comment
    assert result.checks.panel_grounded is False
    assert [j.comment for j in result.dimension("argument").debater_judgments] == ["Maya argued on argument.", ""]


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


def test_a_paraphrased_side_is_read_from_the_motions_own_words():
    """The real misattribution of debateart_0466: the con debater's analysis said he argues for the motion in its
    own words, the next sentence naming him only by a pronoun."""
    debate = MILITARY
    real = ("Blamonkey's argument is strong and well-supported. He presents several points that support the idea "
            "that the US should increase military spending.")
    assert T.wrong_sides(real, debate) == ["blamonkey"]
    assert T.wrong_sides("blamonkey argues the US should not increase military spending.", debate) == []
    assert T.wrong_sides("Alec argues the US should increase military spending.", debate) == []
    assert T.wrong_sides("Alec and blamonkey disagree on whether the US should increase military spending.",
                         debate) == []


def test_a_motion_that_holds_a_negation_is_not_read_as_opposed():
    real = ("Ana's argument is that a four-day week with no loss of pay would attract and keep staff, and every "
            "resignation we prevent saves the cost of recruiting and training a replacement.")
    debate = DEBATE.model_copy(update={"motion": "This house would move all public-sector workers to a four-day "
                                                 "week with no loss of pay."})
    assert T.wrong_sides(real, debate) == []
    assert T.wrong_sides("Ben argues for a four-day week with no loss of pay for public-sector workers.",
                         debate) == ["Ben"]


def test_a_note_that_restates_the_other_debaters_speech_is_at_fault():
    # real notes of the default local model on Ben's speech in the demo (before the retry), and notes about it
    notes = ["Ben argues that trials in Iceland and the UK kept output level while sick days and burnout fell.",
             "Ben cites a study from Iceland and the UK that showed that four-day weeks reduced errors.",
             "Ben says the trials Ana cites were office teams, so they prove little for hospitals.",
             "Ben uses clear, direct language.",
             "Ben supports moving public-sector workers to a four-day week."]
    faults = T.note_faults(notes, DEBATE, 1)
    assert [f.text for f in faults] == ["note 1 restates what Ana said", "note 2 restates what Ana said",
                                        "note 5 puts Ben on the wrong side of the motion"]
    assert [f.note for f in faults] == [1, 2, 5]
    # what Ana said is hers: her own notes, and a note on a speech before hers, restate nobody
    assert T.note_faults(["Ana argues that trials in Iceland and the UK kept output level."], DEBATE, 0) == []


def test_a_case_made_for_the_motion_puts_its_maker_on_that_side():
    # the panel's reason on debateart_0466 (real output): blamonkey argued against more military spending
    debate = MILITARY
    reason = ("The argument presented by blamonkey is strong and well-supported. The debater presents a clear and "
              "convincing case for increasing military spending.")
    assert T.wrong_sides(reason, debate) == ["blamonkey"]
    # naming the motion's subject is not taking its side: blamonkey's own (con) point, in real output, names
    # "military spending" without the motion's "increase"
    against = ("blamonkey argues that military spending will hamper our budgetary efficiency by presenting a logical "
               "argument that.")
    assert T.wrong_sides(against, debate) == [] and T.side_claims(against, ["Alec", "blamonkey"], debate.motion) == []
    assert T.wrong_sides(reason.replace("blamonkey", "Alec"), debate) == []


def test_an_analysis_that_gives_the_speaker_the_other_debaters_words_is_flagged():
    # the demo's argument analysis of Ben's speech as the default local model wrote it (the retry had not mended
    # it): its notes give Ben Ana's Iceland trials; the quotations are Ben's and the "answers" sentence may restate
    written = ('"The trials Ana cites were mostly office teams that chose to take part." Ben argues that trials in '
               'Iceland and the UK maintained output level while sick days and burnout decreased. "Hospitals run on '
               'shifts" Ben argues that a shorter week means hiring more people we cannot find. Ben leaves '
               'unanswered that trials in Iceland and the UK kept output level.')
    [check] = T.check_analyses(DEBATE, "argument", [(1, "Ben", written)])
    assert check.restates == ("Ana",) and check.misattributed
    own = ('"The trials Ana cites were mostly office teams that chose to take part." Ben argues that the trials '
           'were office teams that chose to take part. Ben answers that trials in Iceland and the UK kept output '
           'level only in offices.')
    [check] = T.check_analyses(DEBATE, "argument", [(1, "Ben", own)])
    assert check.restates == () and not check.misattributed
    assert T.notes_of(own) == ["ben argues that the trials were office teams that chose to take part."]
    # the local model's own way of writing its "answers" sentence (debateart_0466, speech 4): not a note
    addressed = own.replace("Ben answers that", "Ben does not address the argument that")
    assert T.notes_of(addressed) == T.notes_of(own)


def test_a_bare_topic_motion_puts_no_one_on_a_side_by_its_words():
    # debateart_0601, "Animal testing": the local model's notes on both debaters name the topic; only an explicit
    # "supports the motion" can say a side there
    from debatrix.core.models import Debate

    d = Debate.model_validate({"id": "t", "motion": "Animal testing",
                               "debaters": [{"name": "Bazza", "side": "pro"}, {"name": "Brendo", "side": "con"}],
                               "speeches": [{"speaker": "Bazza", "content": "x"}, {"speaker": "Brendo", "content": "y"}]})
    assert T.wrong_sides("Brendo proposes an alternative to animal testing, testing on humans.", d) == []
    assert T.wrong_sides("Bazza does not address the argument about the effectiveness of animal testing.", d) == []
    assert T.wrong_sides("Brendo supports the motion.", d) == ["Brendo"]


def test_a_claim_weighed_questioned_or_anothers_puts_no_one_on_a_side():
    """The real local model's sentences the side check misread (debateart_0752, _4562), and the one it must keep."""
    from debatrix.core.models import Debate

    def debate(motion, pro, con):
        return Debate.model_validate({"id": "t", "motion": motion,
                                      "debaters": [{"name": pro, "side": "pro"}, {"name": con, "side": "con"}],
                                      "speeches": [{"speaker": pro, "content": "x"}, {"speaker": con, "content": "y"}]})

    fiveg = debate("5g internet is a death grid", "crossed", "Barney")
    # a rebuttal of pro's claim is Barney's, the claim is not
    assert T.wrong_sides("Barney provides specific evidence and a strong rebuttal to pro's claim that 5g internet "
                         "has a death grid.", fiveg) == []
    assert T.wrong_sides("Barney answers crossed's claim that 5g internet is a death grid.", fiveg) == []
    # a claim weighed ("no evidence for the claim that ...") is not denied by the one who made it
    assert T.wrong_sides("crossed shows that the argument is weak because there is no evidence or support for the "
                         "claim that 5G internet has a death …", fiveg) == []
    # "his claim" is his own (debateart_0752, real output: Barney argued against the motion)
    assert T.wrong_sides("Barney does not provide any evidence or support for his claim that 5g internet has a death "
                         "grid.", fiveg) == ["Barney"]
    # still read: the debater's own verb before the motion's words
    assert T.wrong_sides("Barney argues that 5g internet is a death grid.", fiveg) == ["Barney"]
    faith = debate("THBT: Christianity is a contradiction to Judaism.", "Sir.Lancelot", "Mall")
    assert T.wrong_sides("Sir.Lancelot does not address the question of whether Christianity and Judaism are "
                         "contradictory, but instead focuses on the …", faith) == []
    # the true one: the pro debater said to argue they are no contradiction
    assert T.wrong_sides("Sir.Lancelot argues that Christianity and Judaism are two different positions, not "
                         "contradictions, and uses a relatable example to …", faith) == ["Sir.Lancelot"]
    # a note cut at its cap ends its sentence: the next one, naming only its own debater, is read on its own
    cut = ("Mall argues that Christianity is no contradiction to Judaism, which is a … Sir.Lancelot argues that "
           "Christianity is no contradiction to Judaism.")
    assert T.wrong_sides(cut, faith) == ["Sir.Lancelot"]
    # a comment's sentence about the debaters together (debateart_4735, real output) is neither's side
    abortion = debate("Abortion is always immoral.", "Pevensie", "Other")
    assert T.wrong_sides("Pevensie. Pevensie: The debaters argued that abortion is not always immoral, citing "
                         "religious sources.", abortion) == []
    assert T.wrong_sides("Pevensie argued that abortion is not always immoral.", abortion) == ["Pevensie"]
    # a quotation is the speaker's own words: an analysis is not flagged for what it quotes
    [check] = T.check_analyses(fiveg, "argument", [(1, "Barney", '"I claim that 5g internet is a death grid, '
                                                   'says nobody sane." Barney mocks the claim.')])
    assert check.wrong_sides == ()


def test_a_note_that_says_again_the_speakers_earlier_speech_is_stale(four_day_week):
    # the demo's argument analysis of Ana's second speech (real output of the default local model): its notes are
    # her first speech's points; speech 3 is about rotas and Ben's shift pattern
    demo = four_day_week
    stale = ["Ana argues that tired staff make mistakes, which is valid.",
             "Ana argues that trials in Iceland and the UK kept output level and sick days and burnout fell.",
             "Ana argues that rotas can be redesigned, as Scottish trials are doing.",
             "Ana argues that overtime is already what burnout costs."]
    faults = T.note_faults(stale, demo, 2)
    assert [(f.note, f.earlier) for f in faults] == [(1, 0), (2, 0)]
    assert faults[0].text == "note 1 repeats what Ana said in speech 1, not what speech 3 says"
    assert not faults[0].wrong_side and not faults[0].restates
    # one pair of her earlier words ("sick days") is how a debater names their own case: not enough
    assert T.note_faults(["Ana argues that sick days cost less than redesigned rotas."], demo, 2) == []
    # the result's check flags it, and it is not a misattribution
    [check] = T.check_analyses(demo, "argument", [(2, "Ana", " ".join(stale))])
    assert check.repeats_earlier == (0,) and not check.misattributed


def test_a_sentence_said_again_is_shown_once():
    # the demo's argument judgment on the default local model (real output): one point four times, a word changed
    written = ("Ana: Ana argued that tired staff make mistakes, which is a valid point. Ana argued that trials in "
               "Iceland and the UK kept output level while sick days and burnout fell, which is a valid argument. "
               "Ana argued that trials in Iceland and the UK kept output level and sick days and burnout fell, which "
               "is a valid argument. Ana argued that tired staff make mistakes and that trials in Iceland and the UK "
               "kept output levels and sick days and burnout fell, which is a valid argument.\n"
               "Ben: Ben argued that hospitals, prisons and schools run on shifts. Ben argued that the risk falls on "
               "patients and pupils, which is a valid argument.\n\nWinner: Ana")
    assert T.said_once(written) == (
        "Ana: Ana argued that tired staff make mistakes, which is a valid point. Ana argued that trials in Iceland "
        "and the UK kept output level while sick days and burnout fell, which is a valid argument.\n"
        "Ben: Ben argued that hospitals, prisons and schools run on shifts. Ben argued that the risk falls on "
        "patients and pupils, which is a valid argument.\n\nWinner: Ana")
    # the same verdict about two debaters is two sentences, and a text without repeats is unchanged
    both = "Ana's argument is strong. Ben's argument is strong."
    assert T.said_once(both) == both


def test_an_analysis_note_that_says_an_earlier_note_again_leaves_its_passage_alone():
    from debatrix.graphs.answers import analysis_answer

    schema = analysis_answer(("Jesus did not accomplish this.", "The Messiah has to be a direct descendant of David."),
                             "Sir.Lancelot", first=False, words=60)
    # debateart_4562's argument analysis of speech 1 (real output): the second note is the first again
    note = ("Sir.Lancelot argues that Jesus does not meet the Jewish criteria for being the Messiah, which is a "
            "strong argument.")
    answer = schema.model_validate({"points": [{"quote": "Jesus did not accomplish this.", "note": note},
                                               {"quote": "The Messiah has to be a direct descendant of David.",
                                                "note": note.replace("strong", "clear")}],
                                    "answers": "Sir.Lancelot answers nothing yet."})
    text, memo, _ = answer.text()
    assert text == (f'"Jesus did not accomplish this." {note} "The Messiah has to be a direct descendant of David." '
                    "Sir.Lancelot answers nothing yet.")
    assert memo == f"{note} Sir.Lancelot answers nothing yet."


def test_an_answers_sentence_that_only_echoes_the_instruction_is_left_out():
    from debatrix.graphs.answers import analysis_answer

    # real "answers" sentences of the default local model (the demo's language column; debateart_0752)
    for echo in ("Ben does not provide any answers or leaves unanswered from the earlier speeches.",
                 "Barney does not answer or leave unanswered from earlier speeches."):
        assert T.says_nothing(echo, echo.split()[0])
    # one that names what is left unanswered says something
    assert not T.says_nothing("Ben does not address the issue of pay or the impact on service quality.", "Ben")
    assert not T.says_nothing("Ben does not answer Ana.", "Ben")
    schema = analysis_answer(("Hospitals run on shifts.",), "Ben", first=False, words=60)
    answer = schema.model_validate({"points": [{"quote": "Hospitals run on shifts.",
                                                "note": "Ben uses a short, clear sentence."}],
                                    "answers": "Ben does not provide any answers or leaves unanswered from the "
                                               "earlier speeches."})
    assert answer.text()[0] == '"Hospitals run on shifts." Ben uses a short, clear sentence.'


def test_a_note_broken_off_on_a_word_no_sentence_ends_on_is_cut_back():
    from debatrix.graphs.answers import analysis_answer

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


def test_a_comment_that_gives_its_debater_the_other_debaters_points_is_flagged(four_day_week):
    demo = four_day_week
    # the demo's argument judgment on the default local model (real output): Ben's points in the paragraph on Ana
    on_ana = ("Ana (pro) argues that tired staff make mistakes, which is a valid point. Ana argues that hospitals, "
              "prisons and schools run on shifts: a ward still needs staff seven days a week.")
    assert T.comment_faults(on_ana, demo, "Ana").restates == ("Ben",)
    # her own points, and a sentence on what she answers of Ben's, are hers
    assert not T.comment_faults("Ana argues that tired staff make mistakes. Ana answers that hospitals, prisons and "
                                "schools run on shifts only until rotas are redesigned.", demo, "Ana")
    assert not T.comment_faults("Ana says Ben's hospitals, prisons and schools can change rotas.", demo, "Ana")
    # one sentence's faults, the same whether a reader is shown the section or the result is checked: written as
    # the debater; on the wrong side (Ana argued for the motion)
    assert T.sentence_faults("I argued that rotas can be redesigned.", demo, "Ana") == T.SentenceFaults(
        first_person=True)
    assert T.sentence_faults("Ana argued against the motion.", demo, "Ana").wrong_sides == ("Ana",)
    assert T.comment_faults("Ana argued against the motion. I argued that rotas can be redesigned.", demo,
                            "Ana") == T.SentenceFaults(wrong_sides=("Ana",), first_person=True)


def test_a_section_that_is_only_a_name_is_empty_and_a_quotation_naming_the_other_is_not_a_swap():
    from debatrix.graphs.verdicts import judgment_sections

    # the demo's source judgment on the default local model, order Ana / Ben (real output)
    assert judgment_sections("Ana Winner: Ana\n\nBen Winner: Ben", ["Ana", "Ben"]) == [("Ana", ""), ("Ben", "")]
    [check] = T.check_analyses(DEBATE, "argument", [(1, "Ben", '"The trials Ana cites were mostly office teams '
                                                                'that chose to take part."')])
    assert not check.names_other_only


def test_the_node_checks_notes_as_shown_with_glued_words_split(four_day_week):
    # the demo's language analysis of Ana's second speech, as the DRY sampler had the local model write it (real
    # output): "sickdays" hid her first speech's words from the node's check, and the result's check found them
    from debatrix.graphs.answers import analysis_answer
    from debatrix.graphs.nodes import _faults

    demo = four_day_week
    quote = "Rotas can be redesigned, as Scottish trials are doing, and overtime"
    schema = analysis_answer((quote,), "Ana", first=False, words=60)
    answer = schema.model_validate({"points": [{"quote": quote, "note": "Ana provides evidence that the four-day "
                                                "week reduced sickdays, burnout, and overtime."}],
                                    "answers": "Ana answers Ben's shift pattern."})
    task = demo.speeches[0].content + " " + demo.speeches[2].content
    assert _faults(answer, demo, 2) == []  # glued, the words are not found
    assert [f.earlier for f in _faults(answer, demo, 2, task)] == [0]


def test_a_judgment_keeps_each_debaters_own_points_in_their_section(four_day_week):
    from debatrix.graphs.verdicts import debater_paragraph, own_words

    demo = four_day_week
    # the demo's argument judgments on the default local model (real output, shortened)
    one = ("Ana (pro) argues that tired staff make mistakes, which is a valid point. Ana argues that hospitals, "
           "prisons and schools run on shifts: a ward still needs staff seven days a week. Ana's argument is "
           "strong.\n\nWinner: Ana")
    assert own_words(one, demo) == ("Ana (pro) argues that tired staff make mistakes, which is a valid point. "
                                    "Ana's argument is strong.\n\nWinner: Ana")
    two = ("Ben:\nBen argues that hospitals, prisons and schools run on shifts: a ward still needs staff seven days "
           "a week. Ben assumes the same shift pattern forever.\n\n**Ana**: Ana argues that hospitals, prisons and "
           "schools run on shifts. Ana argues that tired staff make mistakes.")
    mended = own_words(two, demo)
    # Ana's "Ben assumes the same shift pattern forever" leaves Ben's section; the heading of Ana's stays
    assert debater_paragraph(mended, "Ben", ["Ana", "Ben"]).endswith("seven days a week.")
    assert debater_paragraph(mended, "Ana", ["Ana", "Ben"]) == "Ana argues that tired staff make mistakes."
    assert own_words("Winner: Ana", demo) == "Winner: Ana"
    # a quotation of the other debater alone, in the section on this one (the demo's argument judgment, real output)
    assert own_words('Ben: Ben argues that hospitals run on shifts. "Rotas can be redesigned, as Scottish trials are '
                     'doing, and overtime"', demo) == "Ben: Ben argues that hospitals run on shifts."
    # the demo's source judgment on the local model (real output): name-and-Winner lines head nothing, and go
    mended = own_words("Ana Winner: Ana\n\nBen Winner: Ben\nAna: Ana argued that rotas can be redesigned.", demo)
    assert mended == "\nAna: Ana argued that rotas can be redesigned."
    assert debater_paragraph(mended, "Ana", ["Ana", "Ben"]) == "Ana argued that rotas can be redesigned."
    # a sentence about the other debater alone leaves the section (debateart_0601's language judgment, real output,
    # names changed); one on what the section's debater left unanswered stays
    about = ("Ana: Ana clearly stated the main argument. Ben presents a viable alternative, suggesting testing in "
             "offices. Ben's point on shifts went unanswered.")
    assert own_words(about, demo) == "Ana: Ana clearly stated the main argument. Ben's point on shifts went unanswered."
    # a reason in prose, outside any section: a sentence putting a debater on the side they did not argue goes
    # (debateart_4642's panel reason in debatrix mode, real output, names and motion changed)
    prose = ("Ana wins.\n\nThe argument is that the trials worked, which is supported by the shift rotas Ben "
             "explained, so Ben argues for the motion. Ana provides a clear argument about the trials.")
    assert own_words(prose, demo) == "Ana wins.\n\nAna provides a clear argument about the trials."


def test_an_analysis_of_quotations_alone_is_flagged():
    # the demo's argument analysis of Ana's second speech once its stale notes were left out (real output)
    bare = '"Ben assumes the same shift pattern forever." "Rotas can be redesigned, as Scottish trials are doing"'
    [check] = T.check_analyses(DEBATE, "argument", [(1, "Ben", bare)])
    assert check.notes == 0 and not check.misattributed
    [noted] = T.check_analyses(DEBATE, "argument", [(1, "Ben", bare + " Ben says rotas are fixed.")])
    assert noted.notes == 1


def test_a_comment_written_as_the_debater_is_flagged():
    # debateart_0752's argument comments on the local model (real output)
    assert T.first_person("I argued that 5g internet is not a death grid. I provided specific evidence.")
    assert T.first_person("Barney argued well. I also provided a strong rebuttal.")
    assert not T.first_person("Barney argued that 5g internet is not a death grid.")
    assert not T.first_person('Barney quotes "I shall show why any evidence he does present is insufficient".')


def test_an_answers_sentence_that_gets_wrong_whose_point_it_is_is_flagged():
    from pathlib import Path

    from debatrix.core.loader import load_debate

    root = Path(__file__).resolve().parents[1] / "examples"
    demo, uniforms = (load_debate(root / f"{n}.yaml") for n in ("four_day_week", "school_uniforms"))
    # real "answers" sentences of the default local model (the demo's source column, speeches 3 and 4)
    own = T.misread_answer("Ana does not address the claim that four-day weeks can be redesigned to avoid burnout.",
                           demo, "Ana", 2)
    assert own is not None and own.own == ("redesigned", "burnout") and "a point Ana made" in own.text
    cited = T.misread_answer("Ben challenges the claim that four-day weeks reduce error by citing a Scottish trial "
                             "that found overtime.", demo, "Ben", 3)
    assert cited is not None and cited.theirs == ("scottish",) and cited.source == "Ana"
    # Theo's own closing line (real output, the uniforms example's argument column)
    assert T.misread_answer("Theo does not address the case for compulsion in the later speech.", uniforms, "Theo", 3)
    # what the other side said, left unanswered: right, whatever the plural ("costs" is Theo's, "cost" Maya's)
    assert T.misread_answer("Maya does not address the costs Theo raised.", uniforms, "Maya", 2) is None
    assert T.misread_answer("Ben does not address the claim that trials in Iceland kept output level.", demo, "Ben",
                            1) is None
    assert T.misread_answer("Ben answers Ana's trials by citing hospitals that run on shifts.", demo, "Ben", 1) is None
    # the subject of "does not address" is not the debater, or what follows the clause is another matter
    assert T.misread_answer("Ana shows that the argument is weak because it does not address burnout.", demo, "Ana",
                            2) is None
    assert T.misread_answer("Ana does not address the offices, but she does redesign rotas.", demo, "Ana", 2) is None
    # a point Ana has yet to make cannot be hers when her speech 1 is read
    assert T.misread_answer("Ana does not address the claim that rotas can be redesigned.", demo, "Ana", 0) is None
    # on a result: the analysis is misattributed and flagged, and so is the comment
    check = T.check_analyses(demo, "source", [(2, "Ana", '"Rotas can be redesigned" Ana says rotas can change. Ana '
                                                          'does not address the claim that four-day weeks can be '
                                                          'redesigned to avoid burnout.')])[0]
    assert check.misattributed and check.answers_misread == (own.text,)


def test_a_judgment_leaves_out_a_sentence_that_misreads_what_its_debater_answers(four_day_week):
    from debatrix.graphs.verdicts import own_words

    demo = four_day_week
    # the demo's source judgment on the local model (real output; the panel repeated its first sentence on Ben)
    judgment = ("Ana: Ana provided evidence that sick days and burnout fell.\n"
                "Ben: Ben challenged the claim that four-day weeks reduce error by citing a Scottish trial that found "
                "overtime. Ben did not address the claim that four-day weeks are a promise. Ben says hospitals run "
                "on shifts.")
    assert own_words(judgment, demo) == ("Ana: Ana provided evidence that sick days and burnout fell.\n"
                                         "Ben: Ben says hospitals run on shifts.")
    comment = judgment.split("Ben: ", 1)[1]  # as a comment, the check names both sentences
    assert [bool(T.misread_answer(s, demo, "Ben")) for s in T._SENTENCE.split(comment)] == [True, True, False]


def test_a_side_is_read_in_the_past_tense_too():
    # debateart_0466's source judgment on the local model (real output), of blamonkey, who argued against the motion
    said = "Blamonkey argued that the US should increase military spending because the BoP is shared."
    assert T.wrong_sides(said, MILITARY) == ["blamonkey"]
    assert T.wrong_sides("Alec argued that the US should increase military spending.", MILITARY) == []
    assert T.wrong_sides("blamonkey opposed the motion.", MILITARY) == []
    assert T.wrong_sides("Alec opposed the motion.", MILITARY) == ["Alec"]


def test_an_argument_for_the_other_side_is_a_side_taken(four_day_week):
    demo = four_day_week
    # the demo's language judgment on the local model (real output), in the paragraph on Ben (con)
    said = ("Ben also introduced the risk of the four-day week on patients and pupils, which is a strong argument "
            "for the pro side.")
    assert T.sentence_faults(said, demo, "Ben").wrong_sides == ("Ben",)
    # said of the debater's own side, as the model mostly does, it is no fault
    assert not T.sentence_faults("Ana provides evidence that the four-day week reduced sick days and burnout, which "
                                 "is a strong argument for the pro side.", demo, "Ana")
    assert not T.sentence_faults("Ben uses clear language, which is a strong point for the con.", demo, "Ben")


def test_a_judgment_leaves_out_a_sentence_that_puts_its_debater_on_the_wrong_side():
    from debatrix.graphs.verdicts import own_words

    fiveg = Debate(id="g", motion="5g internet is a death grid",
                   debaters=(Debater(name="crossed", side=Side.PRO), Debater(name="Barney", side=Side.CON)),
                   speeches=(Speech(speaker="crossed", content="It kills."), Speech(speaker="Barney", content="No.")))
    # debateart_0752's argument judgment on the local model (real output), in the paragraph on Barney (con)
    judgment = ("Barney: I argued that 5G internet is a death grid because it will cause deaths. I provided strong "
                "evidence and rebuttals to the pro's claim.")
    assert own_words(judgment, fiveg) == "Barney: I provided strong evidence and rebuttals to the pro's claim."

"""Checks of what the judge wrote, read from the text itself: whether an analysis repeats an earlier one of its
column, whether it is grounded in the speech it analyses (and not in other speeches), whether it names the right
debater and gives each debater the side they argued, and whether its quotes are really in the speech.

These are the failure modes of a small model reading its own earlier answers (it copies the nearest text, swaps
the name, and attributes the other debater's words to the speaker), so they run on every result (stored in
:attr:`JudgeResult.checks`, flagged in the CLI summary and the report) and :mod:`debatrix.benchmarks.feedback`
reports them per mode and dimension. Pure functions of text: no model, no I/O."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from collections.abc import Iterable, Sequence

from debatrix.core.models import AnalysisCheck, CommentCheck, Debate, DebateFormat, JudgeResult, Side, TextChecks

#: an analysis sharing at least this share of its word 5-grams with an earlier analysis of its column is a copy
COPY_SHARE = 0.5
COPY_N = 5
GROUND_N = 3  # content-word n-grams for grounding
QUOTE_MIN_WORDS = 3  # shorter quoted strings are scare quotes or terms, not quotations

# Function words, left out of the content-word n-grams that measure grounding (they match in any text).
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below between
both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each either even ever
every few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's may me might
more most much must mustn't my myself neither no nor not now of off on once one only or other ought our ours ourselves
out over own per quite rather same shall shan't she she'd she'll she's should shouldn't since so some such than that
that's the their theirs them themselves then there there's these they they'd they'll they're they've this those
though through thus to too toward towards under until up upon us very via was wasn't we we'd we'll we're we've were
weren't what what's when when's where where's whether which while who who's whom whose why why's will with within
without won't would wouldn't yet you you'd you'll you're you've your yours yourself yourselves
""".split())

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"'})
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def normalized(text: str) -> str:
    """Lower case, compatibility forms folded, curly quotes straightened (what a quotation check compares)."""
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(normalized(text))


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def shared_share(text: str, other: str, n: int = COPY_N) -> float:
    """The share of ``text``'s word n-grams that also occur in ``other`` (0 where ``text`` has none)."""
    mine = ngrams(words(text), n)
    return len(mine & ngrams(words(other), n)) / len(mine) if mine else 0.0


def grounding(text: str, own: str, others: Iterable[str], n: int = GROUND_N) -> tuple[float, float, int]:
    """(share of ``text``'s content-word n-grams found in ``own``, share found only in ``others`` and not in
    ``own``, how many n-grams ``text`` has). An analysis about its speech has the first well above the second."""
    elsewhere: set[tuple[str, ...]] = set()
    for o in others:
        elsewhere |= ngrams(content_words(o), n)
    return _grounding(ngrams(content_words(text), n), ngrams(content_words(own), n), elsewhere)


def _grounding(mine: set[tuple[str, ...]], own: set[tuple[str, ...]], elsewhere: set[tuple[str, ...]]
               ) -> tuple[float, float, int]:
    if not mine:
        return 0.0, 0.0, 0
    in_own = mine & own
    foreign = (mine - in_own) & elsewhere
    return len(in_own) / len(mine), len(foreign) / len(mine), len(mine)


_QUOTED = re.compile(r'"([^"\n]{3,400})"')


def quotes(text: str) -> list[str]:
    """The quotations in ``text``: double-quoted passages of at least :data:`QUOTE_MIN_WORDS` words."""
    return [q.strip() for q in _QUOTED.findall(normalized(text)) if len(words(q)) >= QUOTE_MIN_WORDS]


def quote_found(quote: str, source: str) -> bool:
    """Whether ``quote`` is in ``source`` word for word (case, punctuation and spacing aside; an ellipsis may join
    two passages, each of which must be there)."""
    src = " ".join(words(source))
    parts = [p for p in re.split(r"\.\.\.|…|\[\.\.\.\]", quote) if words(p)]
    return bool(parts) and all(f" {' '.join(words(p))} " in f" {src} " for p in parts)


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` names the debater ``name`` (whole words, any case; "Ana's" counts)."""
    return re.search(rf"(?<![\w]){re.escape(normalized(name))}(?![\w])", normalized(text)) is not None


# Phrases that put a debater on a side of the motion: naming the motion ("supports the motion"), or a verb of support
# or opposition followed by most of the motion's own words ("supports the idea that the US should increase military
# spending"). A sentence that names no debater speaks of the last one named ("He argues ..."); a sentence naming
# several is never held against any of them ("Ana supports the motion, Ben opposes it").
_PRO = re.compile(r"\b(supports?|supported|supporting|defends?|defended|defending|argues? for|argued for|arguing for|"
                  r"in favou?r of|proposes?|proposed|proposing) (the|this) motion\b|\b(for|behind) the motion\b|"
                  r"\bon the (pro|proposition|affirmative) side\b|\bas (the )?(pro|proposition|affirmative)\b|"
                  # "which is a strong argument for the pro side" (the local model's judgments say it of either side)
                  r"\b(argument|point|case|reason|evidence)s? for the (pro|proposition|affirmative)\b")
_CON = re.compile(r"\b(opposes?|opposed|opposing|rejects?|rejected|rejecting|argues? against|argued against|"
                  r"arguing against|attacks?|attacked|attacking) (the|this) motion\b|\bagainst the motion\b|"
                  r"\bon the (con|opposition|negative) side\b|\bas (the )?(con|opposition|negative)\b|"
                  r"\b(argument|point|case|reason|evidence)s? for the (con|opposition|negative)\b")
# present and past: the analyses say "argues", the judgments often "argued" (debateart_0466's source judgment on the
# local model: "Blamonkey argued that the US should increase military spending", of the debater against it)
_PRO_VERB = re.compile(r"\b(supports?|supported|supporting|argues?|argued|arguing|claims?|claimed|believes?|believed|"
                       r"advocates?|advocated|defends?|defended|in favou?r of|wants?|wanted|calls? for|called for|"
                       r"case for|in support of)\b")
_CON_VERB = re.compile(r"\b(opposes?|opposed|opposing|rejects?|rejected|rejecting|against|denies|denied|disputes?|"
                       r"disputed|argues? against|argued against|arguing against)\b")
_NEGATION = re.compile(r"\b(not|no|never|shouldn't|should not|don't|doesn't)\b")
# Where the motion's words stop being the debater's own: a question ("the question of whether ..."), a claim the
# sentence weighs rather than makes ("no evidence for the claim that ...") or another party's ("a rebuttal to pro's
# claim that ..."): the real local model's sentences on debateart_0752 and _4562 that the check misread.
# ("his claim that ..." is the debater's own: "Barney does not provide any evidence for his claim that 5g internet
# has a death grid", debateart_0752, real output, gives con the motion)
_EMBEDDED = re.compile(r"\bwhether\b|\b(for|to|of|against|about|on|with|behind) (the|this|that|a|an) "
                       r"(claim|claims|idea|notion|assertion|argument|view|question|contention|suggestion)\b|"
                       r"\b(pro|con|opponent|opponents|other debater|other side|opposition|proposition)'?s? "
                       r"(claim|claims|case|argument|idea|view|position|point|contention|assertion)\b")
# a sentence about the debaters together (a comment's "The debaters argued that ...") is no one's side
_SEVERAL = re.compile(r"\b(the|both|all|two) (debaters|sides|speakers)\b|\bboth of them\b")
# a sentence ends at its stop, and at the ellipsis that marks a note cut at its length cap
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_MOTION_NOISE = {"house", "thbt", "th", "believes", "would", "should", "resolved"}


def _stem(word: str) -> str:
    """Enough of a word to match its forms ("increasing" the motion's "increase")."""
    return word[:6]


def side_claims(text: str, names: Sequence[str], motion: str = "") -> list[tuple[str, Side]]:
    """(debater, side) for every sentence that puts a debater on a side of the motion."""
    core = {_stem(w) for w in content_words(motion) if w not in _MOTION_NOISE}
    out = []
    last: str | None = None
    for sentence in _SENTENCE.split(text):
        named = [n for n in names if mentions(sentence, n)]
        if len(named) > 1 or _SEVERAL.search(normalized(sentence)):
            last = None
            continue
        who = named[0] if named else last
        last = who
        if who is None:
            continue
        s = normalized(sentence)
        pro, con = bool(_PRO.search(s)), bool(_CON.search(s))
        # only the words before a weighed, questioned or another party's claim are the debater's own
        s = _EMBEDDED.split(s, maxsplit=1)[0]
        for other in names:
            if other != who:  # "... Ana's claim that ...": hers
                s = re.split(rf"(?<![\w]){re.escape(normalized(other))}'s? ", s, maxsplit=1)[0]
        # most of the motion's own words (three quarters: half of "increase military spending" is "military
        # spending", which a sentence against the motion names as readily as one for it)
        # a bare topic ("Animal testing", two words and no verb) is no proposition: both sides name it alike
        if not (pro or con) and len(core) >= 3 and len(core & {_stem(w) for w in content_words(s)}) >= max(
                2, math.ceil(0.75 * len(core))):
            # the motion's own words: whose side depends on the verb before them (and no negation of the motion)
            # a negation the motion does not itself hold ("with no loss of pay" is the motion's own)
            # counted after the first verb of stance: "does not provide any evidence for his claim that ..." negates
            # the providing, not the claim
            verb = min((m for m in (_PRO_VERB.search(s), _CON_VERB.search(s)) if m), key=lambda m: m.start(),
                       default=None)
            negated = len(_NEGATION.findall(s[verb.start():] if verb else s)) > len(
                _NEGATION.findall(normalized(motion)))
            con = bool(_CON_VERB.search(s)) or negated
            pro = bool(_PRO_VERB.search(s)) and not con
        if pro != con:
            out.append((who, Side.PRO if pro else Side.CON))
    return out


# "..., which supports Ben's argument" said of Ana: her point credited to the other side (the demo's source comment on
# Ana, real output, of a Scottish trial she cited). Weakening verbs ("undermines Ben's argument") are no side taken.
_CREDITS = (r"\b(supports?|supported|supporting|strengthens?|strengthened|bolsters?|bolstered|reinforces?|reinforced|"
            r"backs? up|backed up|helps?|helped|favou?rs?|favou?red)\s+(?:\w+\s+){0,2}?")
# the thing credited, or a note cut at its cap right after the name ("which supports Ben's …", the demo's source
# analysis of Ana's second speech, real output)
_POINT = r"'s?(\s+(argument|case|position|point|claim|side|stance)s?\b|\s*(…|\.\.\.))"  # NFKC: … is ...


def credited_to_other(text: str, debate: Debate) -> list[str]:
    """Debaters whose point a sentence says supports an opponent's argument ("Ana cited ..., which supports Ben's
    argument"): the sentence's debater is the one it names other than the opponent, else the last one named."""
    sides = {d.name: d.side for d in debate.debaters}
    out: set[str] = set()
    last: str | None = None
    for sentence in _SENTENCE.split(text):
        named = [n for n in sides if mentions(sentence, n)]
        s = normalized(sentence)
        # "does not support Ben's argument" credits nothing (a negation in the clause before the verb)
        credited = {n for n in named for m in re.finditer(_CREDITS + re.escape(normalized(n)) + _POINT, s)
                    if not _NEGATION.search(s[:m.start()].rsplit(",", 1)[-1])}
        subjects = [n for n in named if n not in credited]
        who = subjects[0] if len(subjects) == 1 else (last if not subjects else None)
        if who and any(sides[who] is not sides[c] for c in credited):
            out.add(who)
        if len(named) == 1:
            last = named[0]
        elif named:
            last = None
    return sorted(out)


def wrong_sides(text: str, debate: Debate) -> list[str]:
    """Debaters the text puts on the side of the motion they did not argue (1v1 and BP), or whose point it credits
    to the other side."""
    if debate.format is DebateFormat.SINGLE:
        return []
    sides = {d.name: d.side for d in debate.debaters}
    claimed = {name for name, side in side_claims(text, list(sides), debate.motion) if sides[name] is not side}
    return sorted(claimed | set(credited_to_other(text, debate)))


NOTE_N = 2  # content-word n-grams for a note: one sentence is short, and "Iceland UK" carries the claim
NOTE_FOREIGN = 1  # pairs of another debater's speech that make a note a restatement (more than its own)
# pairs of the speaker's own earlier speech (and more than of this one) that make a note stale: a debater's key terms
# recur in all their speeches, so one pair is not enough
NOTE_STALE = 2


@lru_cache(maxsize=64)
def _note_grams(debate: Debate, index: int) -> tuple[frozenset, frozenset, frozenset, dict[str, frozenset],
                                                     dict[int, frozenset]]:
    """(the motion's content-word pairs, the speaker of speech ``index``'s over all their speeches, that speech's
    own, each other debater's from the speeches before it, each earlier speech of the speaker's): once per analysis,
    however many of its answers are checked."""
    speaker = debate.speeches[index].speaker
    common = ngrams(content_words(debate.motion), NOTE_N)
    own: set[tuple[str, ...]] = set()
    theirs: dict[str, set[tuple[str, ...]]] = {}
    earlier: dict[int, frozenset] = {}
    for j, s in enumerate(debate.speeches):
        grams = ngrams(content_words(s.content), NOTE_N) - common
        if s.speaker == speaker:
            own |= grams
            if j < index:
                earlier[j] = frozenset(grams)
        elif j < index:  # only what the analyser has read can be carried over
            theirs.setdefault(s.speaker, set()).update(grams)
    this = frozenset(ngrams(content_words(debate.speeches[index].content), NOTE_N) - common)
    return frozenset(common), frozenset(own), this, {k: frozenset(v) for k, v in theirs.items()}, earlier


@dataclass(frozen=True)
class NoteFault:
    note: int  # 1-based, in the answer's order
    text: str  # "note 2 restates what Ana said", as the model is told
    restates: str = ""  # the debater whose words the note gives the speaker
    earlier: int | None = None  # 0-based: the speaker's own earlier speech the note repeats instead of this one
    answers: bool = False  # the "answers" sentence gets wrong whose point is answered (:func:`misread_answer`)

    @property
    def wrong_side(self) -> bool:
        return not self.restates and self.earlier is None and not self.answers


def note_faults(notes: Sequence[str], debate: Debate, index: int, labels: Sequence[str] = ()) -> list[NoteFault]:
    """What is wrong with an analysis's notes on speech ``index`` (each should say what a passage of that speech
    shows): a note restates what another debater said where most of its content-word pairs (the motion's own
    pairs do not count) come from an earlier speech of that debater and not from the speaker's own speeches; it
    puts the speaker on the wrong side of the motion; or it is stale, saying again what the speaker said in an
    earlier speech and not what this one says (the local model's notes on a debater's second speech restate their
    first). The analysis's "answers" sentence is not passed: it may restate what it answers. ``labels``: what each
    note is called in the fault's text (default "note k")."""
    speaker = debate.speeches[index].speaker
    common, own, this, theirs, earlier = _note_grams(debate, index)
    faults = []
    for k, note in enumerate(notes, 1):
        label = labels[k - 1] if labels else f"note {k}"
        mine = ngrams(content_words(note), NOTE_N) - common
        grounded = len(mine & own)
        source, borrowed = max(((name, (mine - own) & g) for name, g in theirs.items()),
                               key=lambda x: len(x[1]), default=("", set()))
        before, repeated = max(((j, (mine - this) & g) for j, g in earlier.items()),
                               key=lambda x: len(x[1]), default=(-1, set()))
        if len(borrowed) >= NOTE_FOREIGN and len(borrowed) > grounded:
            faults.append(NoteFault(k, f"{label} restates what {source} said", source))
        elif speaker in wrong_sides(note, debate):
            faults.append(NoteFault(k, f"{label} puts {speaker} on the wrong side of the motion"))
        elif len(repeated) >= NOTE_STALE and len(repeated) > len(mine & this):
            faults.append(NoteFault(k, f"{label} repeats what {speaker} said in speech {before + 1}, not what "
                                       f"speech {index + 1} says", earlier=before))
    return faults


# ----------------------------------------------------------------------------------------------- on a result


def check_analyses(debate: Debate, dimension: str, analyses: Sequence[tuple[int, str, str]]) -> list[AnalysisCheck]:
    """``analyses``: (speech index, speaker, text) of one column, in speaking order."""
    names = [d.name for d in debate.debaters]
    speeches = [s.content for s in debate.speeches]
    # every speech's n-grams once, not once per analysis that is grounded against it
    grams = [ngrams(content_words(t), GROUND_N) for t in speeches]
    out: list[AnalysisCheck] = []
    for k, (i, speaker, text) in enumerate(analyses):
        best, share = None, 0.0
        for j, _, earlier in analyses[:k]:
            s = shared_share(text, earlier)
            if s > share:
                best, share = j, s
        elsewhere = set().union(*(g for m, g in enumerate(grams) if m != i))
        own, foreign, _ = _grounding(ngrams(content_words(text), GROUND_N), grams[i], elsewhere)
        qs = quotes(text)
        others = [n for n in names if n != speaker and mentions(text, n)]
        notes = notes_of(text)
        faults = note_faults(notes, debate, i)
        restated = [f.restates for f in faults if f.restates]
        misread = [m for m in (misread_answer(x, debate, speaker, i) for x in answers_of(text)) if m] if i else []
        out.append(AnalysisCheck(
            dimension=dimension, index=i, speaker=speaker, words=len(words(text)),
            copy_of=best if share >= COPY_SHARE else None, copy_share=round(share, 4), grounded=round(own, 4),
            foreign=round(foreign, 4), quotes=len(qs), quotes_found=sum(quote_found(q, speeches[i]) for q in qs),
            # a quotation naming the other debater is the speaker's words about them, not a name swapped
            names_other_only=bool(others) and not mentions(_QUOTED.sub(" ", text), speaker)
            and any(mentions(_QUOTED.sub(" ", text), n) for n in others),
            # the quotations are the speaker's own words, whatever side they seem to take out of context
            wrong_sides=tuple(wrong_sides(_QUOTED.sub(" ", text), debate)),
            restates=tuple(dict.fromkeys(restated)),
            repeats_earlier=tuple(sorted({f.earlier for f in faults if f.earlier is not None})),
            answers_misread=tuple(m.text for m in misread), notes=len(notes)))
    return out


# what an analysis's "answers" sentence says of the earlier speeches (it may restate what it answers): "answers",
# "leaves unanswered", and the model's own ways of saying so ("does not address", "ignores", "counters")
_ANSWERS = re.compile(r"\b(answers?|answered|unanswered|rebuts?|rebutted|responds?|responded|replies|replied|"
                      r"challenges?|challenged|address(es|ed)?|ignores?|ignored|counters?|countered|refutes?|"
                      r"refuted|dismiss(es|ed)?)\b")


def says_what_it_answers(sentence: str) -> bool:
    """Whether a sentence says what its speaker answers or leaves unanswered (which may restate the earlier
    speech it answers); one that does not is a note like any other."""
    return bool(_ANSWERS.search(normalized(sentence)))


# the words of the "answers" instruction and the model's stock ways of echoing it: an "answers" sentence made of
# nothing else ("Ben does not provide any answers or leaves unanswered from the earlier speeches", 25 of the 64 on
# the text benchmark's stored run) says nothing of the debate
_ANSWERS_STOCK = frozenset(content_words(
    "answers answer answered answering unanswered leaves leave left earlier speeches speech previous prior provide "
    "provides provided any specific new directly does did not address addresses addressed respond responds "
    "responded rebuttal rebuttals rebut rebuts"))


def says_nothing(sentence: str, speaker: str) -> bool:
    """Whether an "answers" sentence is only the instruction echoed: no word but its speaker's name and the stock
    words of answering."""
    return not set(content_words(sentence)) - _ANSWERS_STOCK - set(content_words(speaker))


# A sentence that says its debater leaves something unanswered ("does not address", "ignores", "fails to answer"):
# what follows names the other side's point. One that answers "by citing" something names the debater's own
# evidence. The subject must be the debater: a few words at most before the verb, naming no one else ("Brendo
# shows that the argument is weak because it does not address ..." is about the argument answered).
_LEFT_UNANSWERED = re.compile(
    r"\b(?:(?:does|do|did|has|have|had)\s*(?:not|n't)|fails?\s+to|failed\s+to|never|neglects?\s+to)\s+"
    r"(?:\w+\s+){0,2}?(?:address(?:es|ed)?|answer(?:s|ed)?|respond(?:s|ed)?(?:\s+to)?|rebut(?:s|ted)?|"
    r"counter(?:s|ed)?|refuted?|engage(?:s|d)?(?:\s+with)?|acknowledge[sd]?)\b|"
    r"\b(?:ignores?|ignored|leaves?\s+unanswered|left\s+unanswered)\b")
_CITING = re.compile(r"\b(?:by\s+)?(?:citing|pointing\s+to|referring\s+to|mentioning)\b")
_CLAUSE_END = re.compile(r"[,;:]|\s(?:but|which|while|whereas|because|although|though|and\s+(?:he|she|they|instead))\s")
_SUBJECT_WORDS = 4  # words before the verb: "Sir.Lancelot does not directly answer", "Ana, however, never addresses"
_OTHER_SUBJECT = re.compile(r"\b(opponent|opposition|other side|it|they)\b")
# words that name what is answered, not what it is about ("the claim that ...", "the issue of ...")
_ANSWERED_STOCK = _ANSWERS_STOCK | frozenset(content_words(
    "claim claims point points argument arguments concern concerns idea issue issues fact statement case question"))


@dataclass(frozen=True)
class MisreadAnswer:
    """An "answers" sentence that gets wrong whose point is answered: ``own`` words are the debater's and not their
    opponents' (named as left unanswered), or ``theirs`` the opponents' (named as the debater's evidence)."""

    debater: str
    own: tuple[str, ...] = ()
    theirs: tuple[str, ...] = ()
    source: str = ""  # the debater whose evidence ``theirs`` is

    @property
    def text(self) -> str:
        if self.own:
            return (f"it says {self.debater} leaves unanswered a point {self.debater} made "
                    f"({', '.join(self.own)}: {self.debater}'s words, not the other side's)")
        return f"it gives {self.debater} the evidence {self.source} cited ({', '.join(self.theirs)})"


def _root(word: str) -> str:
    """A word without its plural or tense ("costs" and "cost", "redesigned" and "redesign"), then its stem: one
    word said by one side only decides this check, so a plural must not make it look unsaid."""
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[:-len(suffix)]
            break
    return _stem(word)


@lru_cache(maxsize=256)
def _said_by(debate: Debate, debater: str, upto: int) -> tuple[frozenset, dict[str, frozenset], frozenset]:
    """(``debater``'s word stems in their speeches up to speech ``upto`` (0-based, included), each other debater's
    in theirs before it, the stems that tell no one apart: the motion's and the names')."""
    skip = {_root(w) for w in content_words(debate.motion)} | {_root(w) for d in debate.debaters
                                                                 for w in words(d.name)}
    own: set[str] = set()
    theirs: dict[str, set[str]] = {}
    for j, s in enumerate(debate.speeches[:upto + 1]):
        stems = {_root(w) for w in content_words(s.content)} - skip
        if s.speaker == debater:
            own |= stems
        elif j < upto:
            theirs.setdefault(s.speaker, set()).update(stems)
    skip |= {_root(w) for w in _ANSWERED_STOCK}
    return frozenset(own), {k: frozenset(v) for k, v in theirs.items()}, frozenset(skip)


def misread_answer(sentence: str, debate: Debate, debater: str, upto: int | None = None) -> MisreadAnswer | None:
    """Whether a sentence on what ``debater`` answers gets wrong whose point it is, as read up to speech ``upto``
    (default: the whole debate). Real output, the demo on the local model: "Ana does not address the claim that
    four-day weeks can be redesigned to avoid burnout" (Ana's own rebuttal), "Ben challenges the claim ... by citing
    a Scottish trial" (Ana cited it). Judged on the words only one side used: at least one of the debater's in the
    point "left unanswered" and none of the opponents' (or the reverse for the evidence cited)."""
    upto = len(debate.speeches) - 1 if upto is None else upto
    text = _QUOTED.sub(" ", normalized(sentence))
    m = _LEFT_UNANSWERED.search(text)
    evidence = False
    if m is None:
        m, evidence = _CITING.search(text), True
        if m is None or not _ANSWERS.search(text[:m.start()]):
            return None
    before = words(text[:m.start()])
    others = [d.name for d in debate.debaters if d.name != debater]
    if not evidence and (len(before) > _SUBJECT_WORDS + len(words(debater)) or _CLAUSE_END.search(text[:m.start()])
                         or any(mentions(text[:m.start()], n) for n in others)
                         or _OTHER_SUBJECT.search(text[:m.start()])):
        return None
    rest = _CLAUSE_END.split(text[m.end():], maxsplit=1)[0]
    own, theirs, skip = _said_by(debate, debater, upto)
    said: dict[str, str] = {}
    for w in content_words(rest):
        said.setdefault(_root(w), w)
    said = {st: w for st, w in said.items() if st not in skip}
    everyone = frozenset().union(*theirs.values())
    mine = [w for st, w in said.items() if st in own and st not in everyone]
    other = [w for st, w in said.items() if st in everyone and st not in own]
    if not evidence and mine and not other:
        return MisreadAnswer(debater, own=tuple(mine))
    if evidence and other and not mine:
        source = max(theirs, key=lambda n: len({_root(w) for w in other} & theirs[n]))
        return MisreadAnswer(debater, theirs=tuple(other), source=source)
    return None


def _bare_sentences(analysis: str) -> list[str]:
    """An analysis's sentences, its quotations taken out."""
    return [s.strip() for s in _SENTENCE.split(_QUOTED.sub(" ", normalized(analysis))) if s.strip()]


def answers_of(analysis: str) -> list[str]:
    """An analysis's sentences on what its speaker answers (the complement of :func:`notes_of`)."""
    return [s for s in _bare_sentences(analysis) if _ANSWERS.search(s)]


def notes_of(analysis: str) -> list[str]:
    """An analysis's notes: its sentences without the quotations, less those on what it answers (which may restate
    what they answer)."""
    return [s for s in _bare_sentences(analysis) if not _ANSWERS.search(s)]


@lru_cache(maxsize=64)
def _speaker_grams(debate: Debate) -> tuple[frozenset, dict[str, frozenset]]:
    """(the motion's content-word pairs, each debater's over all their speeches, the motion's aside)."""
    common = ngrams(content_words(debate.motion), NOTE_N)
    by: dict[str, set[tuple[str, ...]]] = {}
    for s in debate.speeches:
        by.setdefault(s.speaker, set()).update(ngrams(content_words(s.content), NOTE_N) - common)
    return frozenset(common), {k: frozenset(v) for k, v in by.items()}


def borrowed_from(sentence: str, debate: Debate, debater: str) -> str | None:
    """The debater whose words a sentence about ``debater`` gives them as their own, or None: a sentence that names
    no other debater and says nothing of answering, most of whose content-word pairs (the motion's aside) come from
    another debater's speeches and not from ``debater``'s."""
    others = [d.name for d in debate.debaters if d.name != debater]
    bare = _QUOTED.sub(" ", normalized(sentence))
    if not bare.strip(" .,;:"):  # a quotation alone: whose words it quotes (the demo: Ana's, in Ben's paragraph)
        bare = normalized(sentence).replace('"', " ")
    if not bare.strip() or _ANSWERS.search(bare) or any(mentions(bare, n) for n in others):
        return None
    common, by = _speaker_grams(debate)
    own = by.get(debater, frozenset())
    mine = ngrams(content_words(bare), NOTE_N) - common
    source, borrowed = max(((n, (mine - own) & by.get(n, frozenset())) for n in others), key=lambda x: len(x[1]),
                           default=("", set()))
    return source if len(borrowed) >= NOTE_FOREIGN and len(borrowed) > len(mine & own) else None


_FIRST_PERSON = re.compile(r"(?:^|[.!?]\s+)(i|my|we)\s+(argued|argue|provided|provide|believe|think|rebutted|"
                           r"showed|show|also|strongly|have|am|was|will|cited|claim|claimed)\b")


def first_person(comment: str) -> bool:
    """Whether a comment is written as its debater ("I argued that 5g internet is not a death grid",
    debateart_0752 on the local model) rather than about them: a sentence that opens with "I ...", "My ..." or
    "We ..." and a verb of the debater's own."""
    return bool(_FIRST_PERSON.search(normalized(comment)))


@dataclass(frozen=True)
class SentenceFaults:
    """What is wrong with one sentence said of ``who`` (in the section of a judgment on them): the debaters whose
    words it gives ``who`` (:func:`borrowed_from`), its misreading of whose point ``who`` answers
    (:func:`misread_answer`), the debaters it puts on the wrong side of the motion, and whether it is written as
    ``who`` ("I argued ...")."""

    restates: tuple[str, ...] = ()
    answers_misread: tuple[str, ...] = ()
    wrong_sides: tuple[str, ...] = ()
    first_person: bool = False

    @property
    def misattributed(self) -> bool:
        """Whether it gives someone what they did not say or argue (what a shown section leaves out; a sentence
        merely written in the first person keeps its content and is flagged only)."""
        return bool(self.restates or self.answers_misread or self.wrong_sides)

    def __bool__(self) -> bool:
        return self.misattributed or self.first_person

    def __or__(self, other: SentenceFaults) -> SentenceFaults:
        return SentenceFaults(*(tuple(dict.fromkeys(a + b)) for a, b in (
            (self.restates, other.restates), (self.answers_misread, other.answers_misread),
            (self.wrong_sides, other.wrong_sides))), first_person=self.first_person or other.first_person)


def sentence_faults(sentence: str, debate: Debate, who: str) -> SentenceFaults:
    """The faults of one sentence on ``who``: the one list both what a reader is shown (a judgment's section leaves
    such a sentence out, :func:`debatrix.graphs.verdicts.own_words`) and what the result's checks flag
    (:func:`check_result`) are read from, so the two cannot drift apart."""
    source = borrowed_from(sentence, debate, who)
    misread = misread_answer(sentence, debate, who)
    return SentenceFaults(restates=(source,) if source else (), answers_misread=(misread.text,) if misread else (),
                          wrong_sides=tuple(wrong_sides(f"{who}. {sentence}", debate)),
                          first_person=first_person(sentence))


def comment_faults(comment: str, debate: Debate, who: str) -> SentenceFaults:
    """The faults of every sentence of a comment on ``who`` (see :func:`sentence_faults`)."""
    found = SentenceFaults()
    for s in _SENTENCE.split(comment):
        found = found | sentence_faults(s, debate, who)
    return found


def cites_debate(text: str, debate: Debate, n: int = 2) -> bool:
    """Whether ``text`` repeats something said in a speech: a content-word n-gram of a speech (words cut to their
    stems: "disarming Sidious" cites "disarmed Sidious") that is not in the motion nor made of debater names (a
    reason built from weights and names alone has none)."""
    said, common, names = _said_stems(debate, n)
    return any(g not in common and not set(g) <= names for g in ngrams(_stems(text), n) & said)


def _stems(text: str) -> list[str]:
    return [_stem(w) for w in content_words(text)]


@lru_cache(maxsize=64)
def _said_stems(debate: Debate, n: int) -> tuple[frozenset, frozenset, frozenset]:
    """(the speeches' stemmed content-word n-grams, the motion's, the debaters' name stems): once per debate, not
    once per reason checked (the panel checks its reports and each order's reason)."""
    said: set[tuple[str, ...]] = set()
    for s in debate.speeches:
        said |= ngrams(_stems(s.content), n)
    names = {_stem(w) for d in debate.debaters for w in words(d.name)}
    return frozenset(said), frozenset(ngrams(_stems(debate.motion), n)), frozenset(names)


def check_result(result: JudgeResult, debate: Debate) -> TextChecks:
    """Every check on a result's text (its analyses, per-debater comments and the panel's reason)."""
    names = [d.name for d in debate.debaters]
    analyses: list[AnalysisCheck] = []
    comments: list[CommentCheck] = []
    flags: list[str] = []
    for d in result.dimensions:
        column = check_analyses(debate, d.name, [(a.index, a.speaker, a.analysis) for a in d.analyses])
        analyses += column
        for a in column:
            where = f"{d.name}, speech {a.index + 1} ({a.speaker})"
            if a.copied:
                flags.append(f"{where}: repeats the analysis of speech {a.copy_of + 1} "
                             f"({a.copy_share:.0%} of its 5-word phrases)")
            if a.names_other_only:
                flags.append(f"{where}: names only the other side, never {a.speaker}")
            for name in a.wrong_sides:
                flags.append(f"{where}: puts {name} on the wrong side of the motion")
            for name in a.restates:
                flags.append(f"{where}: a note gives {a.speaker} what {name} said")
            for j in a.repeats_earlier:
                flags.append(f"{where}: a note repeats speech {j + 1}, not this one")
            for text in a.answers_misread:
                flags.append(f"{where}: what it answers is misread: {text}")
            if a.notes == 0:
                flags.append(f"{where}: quotations alone, no note on them (left out, or never written)")
            if a.quotes > a.quotes_found:
                flags.append(f"{where}: {a.quotes - a.quotes_found} of {a.quotes} quotations are not in the speech")
        for j in d.debater_judgments:
            if not j.comment:
                flags.append(f"{d.name}: the judgment has no paragraph on {j.debater}")
                continue
            # each sentence read as the section shown reads it (a sentence that names no one speaks of its debater)
            faults = comment_faults(j.comment, debate, j.debater)
            wrong = faults.wrong_sides
            others = [n for n in names if n != j.debater and mentions(j.comment, n)]
            check = CommentCheck(dimension=d.name, debater=j.debater, wrong_sides=wrong,
                                 names_other_only=bool(others) and not mentions(j.comment, j.debater),
                                 restates=faults.restates, first_person=faults.first_person,
                                 answers_misread=faults.answers_misread)
            comments.append(check)
            if check.names_other_only:
                flags.append(f"{d.name}: the comment on {j.debater} is about {', '.join(others)}")
            for name in check.restates:
                flags.append(f"{d.name}: the comment on {j.debater} gives {j.debater} what {name} said")
            for text in check.answers_misread:
                flags.append(f"{d.name}: the comment on {j.debater} misreads what they answer: {text}")
            if check.first_person:
                flags.append(f"{d.name}: the comment on {j.debater} is written as {j.debater} (\"I ...\"), not "
                             "about them")
            for name in wrong:
                flags.append(f"{d.name}: the comment on {j.debater} puts {name} on the wrong side of the motion")
    panel = None
    general = result.general
    # the panel's reason, where a panel wrote one (a mode without a panel shows its one column's verdict)
    if general is not None and general.verdict is not None and "panel_comment" in result.usage.by_node:
        panel = cites_debate(general.verdict.comment, debate)
        if not panel:
            flags.append("panel: the reason cites nothing said in the debate")
        for name in wrong_sides(general.verdict.comment, debate):
            flags.append(f"panel: the reason puts {name} on the wrong side of the motion")
    return TextChecks(analyses=tuple(analyses), comments=tuple(comments), panel_grounded=panel, flags=tuple(flags))


# ----------------------------------------------------------------------------------------------- repair

#: a sentence whose word 3-grams are mostly (this share) in the sentences before it in the same text says nothing new
SAID_SHARE = 0.6


def says_again(sentence: str, seen: set[tuple[str, ...]]) -> bool:
    """Whether ``sentence`` repeats what ``seen`` (the word 3-grams of the sentences before it) already says."""
    grams = ngrams(words(sentence), 3)
    return bool(grams) and len(grams & seen) >= SAID_SHARE * len(grams)


def said_once(text: str) -> str:
    """``text`` without the sentences that say again what an earlier sentence of it said (the local model's
    judgment of the demo said "Ana argued that trials in Iceland and the UK kept output level ..." four times in
    one paragraph, a word changed each time). Line breaks are kept: a judgment's sections start on their lines."""
    seen: set[tuple[str, ...]] = set()
    lines = []
    for line in text.split("\n"):
        kept = []
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            if sentence.strip() and says_again(sentence, seen):
                continue
            seen |= ngrams(words(sentence), 3)
            kept.append(sentence)
        if kept or not line.strip():
            lines.append(" ".join(kept))
    return "\n".join(lines)

_GLUED = re.compile(r"[A-Za-z]{4,}")


def unglued(text: str, source: str) -> str:
    """``text`` with words the sampler glued together split again ("outputlevel" -> "output level") where the
    two words stand side by side in ``source`` and the glued form does not, and runs of spaces made single. The DRY
    sampler that keeps an analysis from repeating earlier ones penalises the next token of a repeated phrase; a
    small model then writes the same words without the space, which is no new thought, only worse to read."""
    seen = words(source)
    vocab = set(seen)
    pairs = set(zip(seen, seen[1:]))

    def split(m: re.Match[str]) -> str:
        w = m.group(0)
        low = w.lower()
        if low in vocab:
            return w
        for k in range(2, len(w) - 1):
            if (low[:k], low[k:]) in pairs:
                return f"{w[:k]} {w[k:]}"
        return w

    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", _GLUED.sub(split, text))

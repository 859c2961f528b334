"""A debate in any script is judged as one in Latin letters is: in every mode, the same debate written in Chinese,
Russian, Arabic and Portuguese completes, and gets no flag that its English version does not (the checks read words
in any script; a flag that only one script raises is a check that cannot read it)."""

from __future__ import annotations

import re

import pytest

from debatrix import JudgeSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.core.modes import MODES
from debatrix.testing import ScriptedChatModel

from .many_scripts import REBUTTALS, two_rounds

_FIGURES = re.compile(r"\s*\(\d+% [^)]*\)|\d+(\.\d+)?%?")


def _kinds(flags: tuple[str, ...]) -> set[str]:
    """The flags without their figures (a share of shared phrases differs by script, what is flagged does not)."""
    return {_FIGURES.sub("", f) for f in flags}


@pytest.mark.parametrize("mode", list(MODES))
async def test_every_script_is_judged_and_flagged_as_the_latin_debate_is(mode):
    settings = JudgeSettings(mode=mode, memory=MemorySettings(embedding="hash"))
    latin = await ajudge_debate(two_rounds("en"), settings, ScriptedChatModel())
    assert latin.status is Status.COMPLETE, latin.incomplete_reason
    for language in sorted(set(REBUTTALS) - {"en"}):
        result = await ajudge_debate(two_rounds(language), settings, ScriptedChatModel())
        assert result.status is Status.COMPLETE, (language, result.incomplete_reason)
        assert result.general is not None and result.general.verdict is not None
        extra = _kinds(result.checks.flags) - _kinds(latin.checks.flags)
        assert not extra, (language, extra)
        # the copy check reads every script: where the English analyses repeat, so do these
        copied = {f for f in _kinds(latin.checks.flags) if "repeats the analysis" in f}
        assert copied <= _kinds(result.checks.flags), (language, copied - _kinds(result.checks.flags))

from __future__ import annotations

from pathlib import Path

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.benchmarks.base import data_root
from debatrix.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATA = data_root()  # $DEBATRIX_DATA, else shared/data beside the checkout or a folder above it
PANELBENCH = DATA / "panelbench"


def need_data(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"real data set not found at {path} (set DEBATRIX_DATA to the shared/data folder)")


def data_required(fn):
    """Mark a test as reading the real data sets; skipped with a message when they are absent."""
    skip = pytest.mark.skipif(not DATA.exists(), reason=f"real data sets not found at {DATA} (set DEBATRIX_DATA)")
    return pytest.mark.data(skip(fn))


@pytest.fixture
def uniforms():
    return load_debate(EXAMPLES / "school_uniforms.yaml")


@pytest.fixture
def four_day_week():
    return load_debate(EXAMPLES / "four_day_week.yaml")


@pytest.fixture
def bp_short():
    return load_debate(EXAMPLES / "bp_short.yaml")


@pytest.fixture
def debate_0466():
    need_data(PANELBENCH)
    return load_debate(PANELBENCH / "DebateArt" / "motion" / "debateart_0466.yml")


def installed_model(name: str) -> str:
    """A catalogue model the test needs, or a skip that names the install command (`make test` installs both)."""
    from debatrix.llm.local import installed_path

    if not installed_path(name).exists():
        pytest.skip(f"{name} is not installed: run `debatrix models install {name}` (make test does)")
    return name


def settings(mode: str = "debatrix", orders: int = 2, merge_score_call: bool = False, score_in_analysis: bool = True,
             **llm) -> JudgeSettings:
    """Test settings; ``orders=1`` for tests about one path of calls (repairs, retries), not about orders; the
    graph's shape flags, then the model's settings."""
    return JudgeSettings(mode=mode, orders=orders, merge_score_call=merge_score_call,
                         score_in_analysis=score_in_analysis, llm=LLMSettings(**llm),
                         memory=MemorySettings(embedding="hash"))


def winner_script(dim_winners: dict[str, str], panel: str | None = None) -> dict:
    """Scripted answers: ``decide_debate`` names the winner by dimension (every debater scored 7), ``panel_decide``
    fixed."""
    script = {"decide_debate": lambda c: {**{n: 7 for n in c.names}, "winner": dim_winners[c.dimension]}}
    if panel:
        script["panel_decide"] = {"winner": panel}
    return script


@pytest.fixture
def scripted():
    return ScriptedChatModel


def winner_record(item: str, decisions: dict[str, float | None], *, gold: dict | None = None,
                  p_one: float | None = None, score: float | None = None, orders: int = 1,
                  agreeing: int | None = None, mode: str = "direct", repeat: int = 0, status: str = "complete",
                  benchmark: str = "debateart", **extra) -> dict:
    """A benchmark record as the runner writes it (format 2): debaters Pro (coded 0.0) and Con (1.0); each
    dimension's verdict names the debater of its code (0.5 or None: a tie), ``score`` the one its scores name,
    ``p_one`` the probability it gives Con; ``orders`` answers, ``agreeing`` of them naming the winner."""
    from debatrix.benchmarks.base import RECORD_FORMAT
    from debatrix.core.models import Judgment, Verdict

    names = {0.0: "Pro", 1.0: "Con"}
    verdicts = {}
    for dim, code in decisions.items():
        winner = names.get(code)
        v = Verdict(dimension=dim, comment="", winner=winner,
                    score_winner=names.get(code if score is None else score),
                    probabilities=None if p_one is None else {"Con": p_one, "Pro": round(1 - p_one, 4)},
                    orders=tuple(Judgment(order=("Pro", "Con"), winner=winner) for _ in range(orders)),
                    orders_agreeing=agreeing)
        verdicts[dim] = v.model_dump(mode="json", exclude={"comment": True, "orders": {"__all__": {"comment"}}})
    return {"benchmark": benchmark, "format": RECORD_FORMAT, "item": item, "mode": mode, "repeat": repeat,
            "status": status, "verdicts": verdicts, "sides": {"Pro": 0.0, "Con": 1.0}, "tie": 0.5,
            "usage": {}, **({} if gold is None else {"gold": gold}), **extra}

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatrix import InvalidDebateError, load_debate
from debatrix.core.loader import debate_from_dict, debate_to_dict
from debatrix.core.models import DebateFormat, Side

from .conftest import EXAMPLES, PANELBENCH, need_data

GOOD = {
    "motion": "This house would test.",
    "debaters": [{"name": "A", "side": "pro"}, {"name": "B", "side": "con"}],
    "speeches": [{"speaker": "A", "content": "first"}, {"speaker": "B", "content": "second"}],
}


def write(tmp_path, data, name="d.yaml"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if name.endswith(".json") else __import__("yaml").safe_dump(data))
    return p


def problems(excinfo):
    return excinfo.value.problems


def test_project_schema_yaml_and_json(tmp_path):
    for name in ("d.yaml", "d.json"):
        d = load_debate(write(tmp_path, GOOD, name))
        assert d.id == "d" and d.format is DebateFormat.ONE_V_ONE
        assert [s.speaker for s in d.speeches] == ["A", "B"]
        assert d.debater("B").side is Side.CON


def test_round_trip(uniforms):
    assert debate_from_dict(debate_to_dict(uniforms)) == uniforms


def test_examples_validate():
    for p in EXAMPLES.glob("*.yaml"):
        load_debate(p)


@pytest.mark.parametrize(
    "change, where, message",
    [
        ({"speeches": [{"speaker": "A", "content": "x"}, {"speaker": "Zed", "content": "y"}]}, "",
         "unknown speaker 'Zed'"),
        ({"speeches": [{"speaker": "A", "content": "x"}, {"speaker": "B", "content": "  \n"}]},
         "speeches.1.content", "speech is empty"),
        ({"debaters": [{"name": "A", "side": "pro"}, {"name": "A", "side": "con"}]}, "",
         "duplicate debater names: A"),
        ({"speech_order": ["A", "A"]}, "speech_order.1", "speech order says 'A' but speech 2 is by 'B'"),
        ({"speech_order": ["A"]}, "speech_order", "lists 1 speeches but there are 2"),
        ({"debaters": [{"name": "A", "side": "pro"}, {"name": "B", "side": "pro"}]}, "",
         "exactly one pro and one con"),
        ({"speeches": [{"speaker": "A", "content": "x"}, {"speaker": "A", "content": "y"}]}, "",
         "debater 'B' gives no speech"),
        ({"colour": "red"}, "", "unknown keys: colour"),
        ({"debaters": [{"name": "tie", "side": "pro"}, {"name": "B", "side": "con"}]}, "debaters.0.name",
         "'tie' is reserved"),
    ],
)
def test_bad_debates_name_file_field_and_problem(tmp_path, change, where, message):
    path = write(tmp_path, {**GOOD, **change})
    with pytest.raises(InvalidDebateError) as e:
        load_debate(path)
    assert str(path) in str(e.value)
    assert any(loc == where and message in msg for loc, msg in problems(e)), problems(e)


def test_missing_fields(tmp_path):
    with pytest.raises(InvalidDebateError) as e:
        load_debate(write(tmp_path, {"motion": "m"}))
    assert ("debaters", "field required") in problems(e) and ("speeches", "field required") in problems(e)


def test_bad_encoding(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes("motion: caf\xe9\n".encode("latin-1"))
    with pytest.raises(InvalidDebateError, match=r"latin1.yaml: bad encoding: not UTF-8 text \(invalid byte 0xe9"):
        load_debate(p)


def test_bad_yaml_and_missing_file(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("motion: [unclosed")
    with pytest.raises(InvalidDebateError, match="not valid YAML"):
        load_debate(p)
    with pytest.raises(InvalidDebateError, match="file not found"):
        load_debate(tmp_path / "nope.yaml")
    with pytest.raises(InvalidDebateError, match="expected motion, debaters and speeches at the top level, got a list"):
        load_debate(write(tmp_path, ["a"]))
    for nothing in ("", "# only a comment\n", "\n\n"):  # YAML reads these as nothing: said so, not "NoneType"
        p.write_text(nothing)
        with pytest.raises(InvalidDebateError, match="the file is empty") as e:
            load_debate(p)
        assert "NoneType" not in str(e.value)


def test_preset_pair_mismatch(tmp_path):
    (tmp_path / "motion").mkdir()
    (tmp_path / "speech").mkdir()
    (tmp_path / "motion" / "x.yml").write_text(
        "motion: M\npro_side: [{name: A}]\ncon_side: [{name: B}]\nspeech_order: [A, B, A]\n")
    (tmp_path / "speech" / "x.yml").write_text(
        "- {debater_name: A, content: one}\n- {debater_name: B, content: two}\n")
    with pytest.raises(InvalidDebateError, match="lists 3 speeches but there are 2"):
        load_debate(tmp_path / "motion" / "x.yml")
    (tmp_path / "speech" / "y.yml").write_text("- {debater_name: A, content: one}\n")
    with pytest.raises(InvalidDebateError, match="preset pair incomplete"):
        load_debate(tmp_path / "speech" / "y.yml")


@pytest.mark.data
def test_every_panelbench_preset_loads():
    need_data(PANELBENCH)
    art = sorted((PANELBENCH / "DebateArt" / "motion").glob("debateart_*.yml"))
    bp = sorted((PANELBENCH / "BP-Competition" / "motion").glob("bp_*.yml"))
    assert (len(art), len(bp)) == (100, 22)  # SOURCE.md
    for p in art:
        d = load_debate(p)
        assert d.format is DebateFormat.ONE_V_ONE and 4 <= len(d.speeches) <= 10
    for p in bp:
        d = load_debate(p)
        assert d.format is DebateFormat.BP and len(d.speeches) == 8
        assert [d.debater(s.speaker).position for s in d.speeches] == ["OG", "OO", "OG", "OO", "CG", "CO", "CG", "CO"]


@pytest.mark.data
def test_debateart_0466(debate_0466):
    d = debate_0466
    assert d.motion == "The US should increase military spending."
    assert [x.name for x in d.debaters] == ["Alec", "blamonkey"]
    assert [s.speaker for s in d.speeches] == ["Alec", "blamonkey"] * 4
    assert d.info_slide.startswith("Below are extra information provided by Alec")


def test_a_file_too_large_for_any_model_is_refused_before_it_is_read(tmp_path):
    from debatrix.core.loader import MAX_FILE_BYTES

    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:  # sparse: its size is all that is looked at
        fh.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(InvalidDebateError, match="a debate file is at most 8 MB"):
        load_debate(big)


_WORDS = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), max_codepoint=0x24F),
                 min_size=1, max_size=12)
_TEXT = st.lists(_WORDS, min_size=1, max_size=30).map(" ".join)


@st.composite
def _debates(draw):
    names = draw(st.lists(_WORDS, min_size=2, max_size=2, unique_by=str.casefold))
    speakers = draw(st.permutations(names)) + draw(st.lists(st.sampled_from(names), max_size=4))  # both speak
    return {"schema": "debatrix.debate/1", "id": "d" + draw(_WORDS), "motion": draw(_TEXT),
            "debaters": [{"name": names[0], "side": "pro"}, {"name": names[1], "side": "con"}],
            "speeches": [{"speaker": s, "content": draw(_TEXT)} for s in speakers]}


@settings(max_examples=40, deadline=None)
@given(data=_debates(), as_json=st.booleans())
def test_any_valid_debate_survives_a_file_round_trip(tmp_path_factory, data, as_json):
    import yaml

    debate = debate_from_dict(data, "<generated>")
    path = tmp_path_factory.mktemp("rt") / ("d.json" if as_json else "d.yaml")
    mapping = debate_to_dict(debate)
    path.write_text(json.dumps(mapping) if as_json else yaml.safe_dump(mapping, allow_unicode=True),
                    encoding="utf-8")
    again = load_debate(path)
    assert again == debate and again.fingerprint == debate.fingerprint
    assert len(again.speeches) == len(data["speeches"])
    assert [s.content.split() for s in again.speeches] == [s["content"].split() for s in data["speeches"]]


@pytest.fixture(scope="module")
def fake_server():
    from debatrix.testing import FakeOpenAIServer

    with FakeOpenAIServer(exact_usage=False) as server:
        yield server


@settings(max_examples=12, deadline=None)
@given(data=_debates(), mode=st.sampled_from(["flow", "direct", "chronological"]))
def test_any_judged_result_survives_a_json_round_trip(fake_server, data, mode):
    import asyncio

    from debatrix import JudgeSettings, LLMSettings, MemorySettings
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import JudgeResult

    debate = debate_from_dict(data, "<generated>")
    settings_ = JudgeSettings(mode=mode, llm=LLMSettings(base_url=fake_server.base_url, model="fake-model",
                                                        api_key="x"), memory=MemorySettings(embedding="hash"))
    result = asyncio.run(ajudge_debate(debate, settings_))
    again = JudgeResult.model_validate_json(result.model_dump_json())
    assert again == result and again.model_dump_json() == result.model_dump_json()


@pytest.mark.parametrize("empty", [False, True])
def test_every_problem_of_a_file_is_named_at_once(empty):
    """A file with several problems names all of them, whether or not a field of it is invalid too (pydantic reads
    the roster only once every field is valid)."""
    from debatrix.core.errors import InvalidDebateError
    from debatrix.core.loader import debate_from_dict

    data = {"motion": "M", "debaters": [{"name": "A", "side": "pro"}, {"name": "B", "side": "pro"}],
            "speeches": [{"speaker": "A", "content": "" if empty else "hi"}, {"speaker": "C", "content": "yo"}]}
    with pytest.raises(InvalidDebateError) as e:
        debate_from_dict(data)
    text = str(e.value)
    assert "unknown speaker 'C'" in text and "exactly one pro and one con" in text and "'B' gives no speech" in text
    assert ("speech is empty" in text) is empty

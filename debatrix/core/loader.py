"""Load debates from the project's own schema (YAML/JSON) or from a Debatrix/PanelBench preset pair.

Project schema (``debatrix.debate/1``)::

    schema: debatrix.debate/1     # optional
    id: my-debate                 # optional, defaults to the file name
    format: 1v1                   # 1v1 | bp; optional, inferred from the debaters
    motion: This house would ...
    info_slide: ...               # optional
    debaters:
      - {name: Alice, side: pro}              # bp: {name: ..., side: pro, position: OG}
      - {name: Bob, side: con}
    speech_order: [Alice, Bob]    # optional; checked against the speeches when given
    simultaneous: [[1, 2]]        # optional; speeches written without seeing each other (numbered from 1)
    speeches:
      - {speaker: Alice, content: "..."}
      - {speaker: Bob, content: "..."}

Preset pair (the layout of the Debatrix repository and PanelBench): ``motion/<id>.yml`` with ``motion``,
``pro_side``/``con_side`` (or ``pro_speakers``/``con_speakers``) lists of ``{name}``, ``info_slide`` and
``speech_order``; and ``speech/<id>.yml``, a list of ``{debater_name | speaker_name, content}``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from debatrix.core.errors import InvalidDebateError, cut, field_problems
from debatrix.core.models import BP_POSITIONS, Debate, DebateFormat, Side, roster_problems

SCHEMA_ID = "debatrix.debate/1"
_PROJECT_KEYS = {"schema", "id", "format", "motion", "info_slide", "debaters", "speech_order", "speeches",
                 "simultaneous"}
_BP_NAME = re.compile(r"\((OG|OO|CG|CO)\)\s*$")


MAX_FILE_BYTES = 8 << 20  # a debate file's size at most: ~40 times what the largest context window (128k tokens) holds


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:  # refused before it is read: a 50 MB file took a minute and 1.2 GB to refuse
            raise InvalidDebateError(str(path), [("", f"the file is {size / (1 << 20):.0f} MB; a debate file is at "
                                                      f"most {MAX_FILE_BYTES >> 20} MB (no model reads that much)")])
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidDebateError(str(path), [("", "file not found")]) from None
    except OSError as e:
        raise InvalidDebateError(str(path), [("", f"cannot read file: {e.strerror}")]) from None
    return _decoded(data, str(path))


def _decoded(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InvalidDebateError(
            source, [("", f"bad encoding: not UTF-8 text (invalid byte 0x{data[e.start]:02x} at offset {e.start})")]
        ) from None


def strict_yaml(data: bytes, source: str) -> Any:
    """A YAML file read as debates are (UTF-8, no key twice in one mapping): for the other files users write
    (dimension files); problems raise :class:`InvalidDebateError` naming ``source``."""
    return _parse_text(_decoded(data, source), source, json_text=False)


class _DuplicateKey(ValueError):
    def __init__(self, key: Any, line: int | None):
        super().__init__(f"key {key!r} appears twice in one mapping" + (f" (line {line})" if line else ""))


class _StrictLoader(yaml.SafeLoader):
    """YAML that refuses a key given twice in one mapping (PyYAML silently keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(key, key_node.start_mark.line + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _json_pairs(text: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
                line = text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None
                raise _DuplicateKey(key, line)
            out[key] = value
        return out

    return hook


def _parse(path: Path) -> Any:
    return _parse_text(_read_text(path), str(path), json_text=path.suffix.lower() == ".json")


def _parse_text(text: str, source: str, json_text: bool) -> Any:
    kind = "JSON" if json_text else "YAML"
    try:
        if json_text:
            return json.loads(text, object_pairs_hook=_json_pairs(text))
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except _DuplicateKey as e:
        raise InvalidDebateError(source, [("", str(e))]) from None
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        raise InvalidDebateError(source, [("", f"not valid {kind}: {e}")]) from None
    except ValueError as e:  # e.g. an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise InvalidDebateError(source, [("", f"not usable {kind}: {str(e).splitlines()[0][:160]}")]) from None


def debate_from_text(text: str, source: str = "<pasted debate>", default_id: str = "debate") -> Debate:
    """A debate pasted or uploaded as text: JSON when it starts with ``{``, else YAML; checked as a file is."""
    return debate_from_dict(_parse_text(text, source, json_text=text.lstrip().startswith("{")), source, default_id)


def _problems(err: ValidationError) -> list[tuple[str, str]]:
    return field_problems(err)


def validated(data: Any, source: str) -> Debate:
    """A :class:`Debate` from its own fields (e.g. a graph's JSON input), its problems in the loader's words."""
    try:
        return Debate.model_validate(data)
    except ValidationError as e:
        raise InvalidDebateError(source, _problems(e)) from None


def debate_from_dict(data: Any, source: str = "<debate>", default_id: str = "debate") -> Debate:
    """Validate a project-schema mapping into a :class:`Debate`."""
    if data is None:  # YAML reads an empty file (or only comments) as nothing at all
        raise InvalidDebateError(source, [("", "the file is empty: a debate needs motion, debaters and speeches "
                                               "(examples/four_day_week.yaml shows the shape)")])
    if not isinstance(data, dict):
        kind = {list: "a list", str: "a line of text", int: "a number", float: "a number", bool: "true or false"}.get(
            type(data), type(data).__name__)
        raise InvalidDebateError(source, [("", f"expected motion, debaters and speeches at the top level, got "
                                               f"{kind}")])
    problems: list[tuple[str, str]] = []
    unknown = sorted(map(str, set(data) - _PROJECT_KEYS))
    if unknown:  # a file that is no debate at all (a symlink to a system file) has many: a few are named, cut short
        named = ", ".join(cut(k, 40) for k in unknown[:4]) + (f" and {len(unknown) - 4} more"
                                                               if len(unknown) > 4 else "")
        problems.append(("", f"unknown keys: {named} (allowed: {', '.join(sorted(_PROJECT_KEYS))})"))
    schema = data.get("schema", SCHEMA_ID)
    if schema != SCHEMA_ID:
        problems.append(("schema", f"unsupported schema {schema!r}; this version reads {SCHEMA_ID!r}"))
    for key in ("motion", "debaters", "speeches"):
        if key not in data:
            problems.append((key, "field required"))
    if problems:
        raise InvalidDebateError(source, problems)
    fields = {k: v for k, v in data.items() if k not in ("schema", "speech_order")}
    fields.setdefault("id", default_id)
    if "format" not in fields and isinstance(fields.get("debaters"), list) and len(fields["debaters"]) == 4:
        fields["format"] = DebateFormat.BP
    speeches = data.get("speeches")
    order = data.get("speech_order")
    if order is not None:
        _check_order(order, speeches, "speech_order", source)
    try:
        return Debate.model_validate(fields)
    except ValidationError as e:
        # pydantic checks the roster only once every field is valid: read it from the raw values too, so an empty
        # speech and an unknown speaker are both named
        found = [p for p in _problems(e) if p[0]]
        found += [("", m) for m in _raw_roster(fields) if ("", m) not in found]
        raise InvalidDebateError(source, found or _problems(e)) from None


def _raw_roster(fields: dict[str, Any]) -> list[str]:
    """:func:`roster_problems` of a file's raw values (best effort: values of the wrong type are left to the
    field errors)."""
    debaters = [d for d in fields.get("debaters") or () if isinstance(d, dict)] \
        if isinstance(fields.get("debaters"), list) else []
    speeches = fields.get("speeches") if isinstance(fields.get("speeches"), list) else []
    try:
        fmt = DebateFormat(fields.get("format", DebateFormat.ONE_V_ONE))
    except ValueError:
        fmt = None
    side = {s.value: s for s in Side}
    roster = [(d.get("name"), side.get(str(d.get("side", "")).strip().lower()), d.get("position")) for d in debaters]
    return roster_problems(fmt, roster, [s.get("speaker") for s in speeches if isinstance(s, dict)])


def _check_order(order: Any, speeches: Any, where: str, source: str, speaker_key: str = "speaker") -> None:
    if not isinstance(order, list) or not isinstance(speeches, list):
        raise InvalidDebateError(source, [(where, "speech order and speeches must both be lists")])
    if len(order) != len(speeches):
        raise InvalidDebateError(
            source, [(where, f"speech order lists {len(order)} speeches but there are {len(speeches)} speeches")]
        )
    for i, (expected, speech) in enumerate(zip(order, speeches)):
        got = speech.get(speaker_key) if isinstance(speech, dict) else None
        if got != expected:
            raise InvalidDebateError(
                source, [(f"{where}.{i}", f"speech order says {expected!r} but speech {i + 1} is by {got!r}")]
            )


def load_preset(motion_path: Path, speech_path: Path) -> Debate:
    """Load a Debatrix/PanelBench ``motion/<id>.yml`` + ``speech/<id>.yml`` pair."""
    return _preset(_parse(motion_path), _parse(speech_path), str(motion_path), str(speech_path), motion_path.stem)


def preset_from_text(motion_text: str, speech_text: str, debate_id: str = "preset") -> Debate:
    """A preset pair given as the two files' texts (uploaded or pasted), checked as files are."""
    motion_src, speech_src = f"motion/{debate_id}.yml", f"speech/{debate_id}.yml"
    return _preset(_parse_text(motion_text, motion_src, json_text=False),
                   _parse_text(speech_text, speech_src, json_text=False), motion_src, speech_src, debate_id)


def _preset(motion: Any, speeches_raw: Any, motion_path: str, speech_path: str, debate_id: str) -> Debate:
    src = f"{motion_path} + {speech_path}"
    if not isinstance(motion, dict):
        raise InvalidDebateError(motion_path, [("", "expected a mapping with motion, sides and speech_order")])
    if not isinstance(speeches_raw, list):
        raise InvalidDebateError(speech_path, [("", "expected a list of speeches")])
    pro = motion.get("pro_side", motion.get("pro_speakers"))
    con = motion.get("con_side", motion.get("con_speakers"))
    problems = []
    for key, val in (("motion", motion.get("motion")), ("pro_side", pro), ("con_side", con)):
        if not val:
            problems.append((key, "field required"))
    if problems:
        raise InvalidDebateError(motion_path, problems)
    speeches = []
    for i, s in enumerate(speeches_raw):
        if not isinstance(s, dict):
            raise InvalidDebateError(speech_path, [(str(i), "expected a mapping with speaker and content")])
        speaker = s.get("debater_name", s.get("speaker_name", s.get("speaker")))
        speeches.append({"speaker": speaker, "content": s.get("content") or ""})
    order = motion.get("speech_order")
    if order is not None:
        _check_order(order, speeches, "speech_order", speech_path)
    try:
        names = [(d["name"], "pro") for d in pro] + [(d["name"], "con") for d in con]
    except (TypeError, KeyError):
        raise InvalidDebateError(motion_path, [("pro_side", "sides must be lists of {name: ...}")]) from None
    debaters: list[dict[str, Any]] = [{"name": n, "side": side} for n, side in names]
    fmt = DebateFormat.ONE_V_ONE
    if len(debaters) == 4:
        fmt = DebateFormat.BP
        defaults = {"pro": iter(("OG", "CG")), "con": iter(("OO", "CO"))}
        for d in debaters:
            m = _BP_NAME.search(d["name"])
            d["position"] = m.group(1) if m else next(defaults[d["side"]])
    data = {
        "id": debate_id,
        "motion": motion["motion"],
        "info_slide": motion.get("info_slide") or "",
        "format": fmt,
        "debaters": debaters,
        "speeches": speeches,
    }
    try:
        return Debate.model_validate(data)
    except ValidationError as e:
        raise InvalidDebateError(src, _problems(e)) from None


def _preset_partner(path: Path) -> tuple[Path, Path] | None:
    if path.parent.name in ("motion", "speech"):
        root = path.parent.parent
        motion, speech = root / "motion" / path.name, root / "speech" / path.name
        if motion.exists() and speech.exists():
            return motion, speech
        missing = speech if path.parent.name == "motion" else motion
        raise InvalidDebateError(str(path), [("", f"preset pair incomplete: {missing} not found")])
    return None


def load_debate(path: str | Path) -> Debate:
    """Load a debate from a project-schema YAML/JSON file or from either file of a preset pair."""
    path = Path(path)
    if path.is_dir():
        raise InvalidDebateError(str(path), [("", "is a directory; pass a debate file (or motion/<id>.yml)")])
    pair = _preset_partner(path)
    if pair:
        return load_preset(*pair)
    return debate_from_dict(_parse(path), str(path), default_id=path.stem)


def debate_to_dict(debate: Debate) -> dict[str, Any]:
    """The project-schema mapping of a debate (round-trips through :func:`debate_from_dict`)."""
    data = debate.model_dump(mode="json", exclude_defaults=False)
    for d in data["debaters"]:
        if d.get("position") is None:
            d.pop("position", None)
    return {"schema": SCHEMA_ID, **data}


__all__ = ["load_debate", "load_preset", "debate_from_dict", "debate_to_dict", "BP_POSITIONS"]

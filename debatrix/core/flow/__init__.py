"""The default mode, the flow, in one home: the judge keeps a debate as an adjudicator flows it, one row per
argument and every answer drawn against what it answers, from small decisions the model makes with probabilities
and cited by passage id. Nothing here calls a model: the decisions come in as :class:`SpeechFlow` (one speech's
analysis in one dimension: the analysis memory's entry), and the ledger, the scores and the verdict are computed
from them, the same way every time, so a verdict can be recomputed from a stored result. Its node is
:mod:`debatrix.graphs.flow_nodes`.

- :mod:`.ledger`: the record: its types, the passage table's ids, the ledger from the decisions.
- :mod:`.asks`: what is asked: the kinds of decision, the rows each passage is asked about, the call budget, the requests.
- :mod:`.measures`: what each dimension weighs (its measure) and the verdict computed from its ledger.
- :mod:`.words`: what a coach reads: figures as the model gave them, comments, speech notes, the sheet's words.

Every public name is re-exported here: the rest of the judge imports the flow from this package, never
from one of its modules."""

from __future__ import annotations

from .ledger import (  # noqa: F401
    ARGUMENT_AT, CELL_MEANING, Cell, Correction, EITHER_WAY_ALL, EVEN, GIST_WORDS, ID, Ledger, Line, MARK_FIELDS,
    Mark, PARTLY_AT, People, Rating, STATUS_MEANING, STATUS_ORDER, SpeechFlow, Status, TELLS_AT, Tally, Thread,
    cell_word, corrected, either_way, figures_of, filled, gist, ledger, places, reading, standing_chances, told,
    unsure, untested_rate
)
from .asks import (  # noqa: F401
    ASK_PER_PASSAGE, GIST_ASKED, KINDS, MARKS, STEM_CHARS, Vector, about_passage, answer_question, asked_budget,
    asked_kinds, asked_pairs, asks_together, cosine, covered, debate_idf, flow_calls, idf, open_rows,
    passage_messages, propose, questions_of, terms
)
from .measures import (  # noqa: F401
    EMPTY, FlowVerdict, JUDGED, MEASURES, MISSING_AT, Measure, Reckoning, as_verdict, blind_reason, combined,
    debater_comment, flow_verdict, held, measure_of, missing_share, not_judged, place_taken_out, proven, reckon,
    softmax, speech_note, speech_value, weighed_by_readings
)
from .words import (  # noqa: F401
    CITED, FLOW_LINE_LEGEND, answer_words, answered_note, argued_note, clash_comment, clear_comment, cleared_note,
    decision_words, engaged_note, evidence_comment, evidenced_note, flow_line, own_range, said_mean, said_p,
    standing_comment, standing_words, tally_line, unknown_words, weighed_line
)

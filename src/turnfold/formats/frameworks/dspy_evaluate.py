"""DSPy's ``Evaluate`` results, as ``save_as_json=`` and ``save_as_csv=`` save them: one run of
the program per example of the devset (spec A-1, H-6, C-1).

``Evaluate.__call__`` (``dspy/evaluate/evaluate.py``) runs the program on each example, scores
its ``Prediction`` with the metric, and saves ``_prepare_results_output``: for each example,
``merge_dicts(example, prediction) | {metric_name: score}``. That is the example's fields, then
the prediction's (its store: a ReAct's ``trajectory`` and ``reasoning``, then the signature's
output fields), a name both hold written ``example_<name>`` and ``pred_<name>``, and last the
score under the metric's name (its function's ``__name__``, else its class's). An example whose
program raised has an empty prediction, scored ``failure_score`` (0.0 by default): its row holds
the example's fields and the score alone. ``save_as_json`` writes the rows as one JSON array;
``save_as_csv`` writes them with ``csv.DictWriter`` under the first row's columns, each value
``str()`` of it (a trajectory is the Python literal of its dict; DSPy's writer raises on a row
with other columns, so a CSV holds no failed example beside others).

Each row is a run, numbered from 0 (its ``sample``): ``load(path, sample=n)`` reads one;
``load(path)`` reads a file of one row and names the rows of any other in its error; a scan
makes a row of each (``path#n``). A run is:

- the example's fields → the :class:`UserMessage` (the value of one, a ``name: value`` line
  each of several). DSPy saves no word of which fields were inputs: an example's labels are
  among them, but for the names the prediction holds too (``example_<name>``), which are its
  ``metadata["target"]`` (the value of one, else a mapping). DSPy's own ``dspy_`` keys are left
  out;
- the prediction (``pred_`` taken off the names it shares with the example) → what
  :mod:`~turnfold.formats.frameworks.dspy` reads of a saved ``Prediction``: the steps of its
  trajectory, its reasoning, its answer. None: an :class:`AssistantError` says the program
  raised, and the outcome is ``"error"``;
- the score → ``metadata["score"]`` (a number; ``True`` is 1.0), ``metadata["scores"]``
  (``{metric: {"value": score}}``, as an Inspect log's) and ``metadata["outcome"]`` by Inspect's
  rule (``True`` or 1 passes, ``False`` or 0 fails, another number says nothing).

Where the prediction begins: at ``trajectory``, ``reasoning`` or a ``pred_`` name; in a row with
none of them (a program without reasoning whose outputs share no name with the example), at
the first name no other row has among its example's fields.

The ``EvaluationResult`` itself (what ``Evaluate(...)(program)`` returns, a ``Prediction`` of
``score`` and ``results``, each an ``(example, prediction, score)``) loads and scans the same
way, its runs numbered and read as the saved file's: ``load(result, sample=n)``, ``scan(result)``
(``#n``). In memory the example says which fields are its inputs (``with_inputs``): they are
the prompt, the others its ``metadata["target"]``. The metric's name is not in it: no
``metadata["scores"]``.

Detection: a JSON array of objects that all end with one name holding a number or a bool (the
metric), at least one of them with a ReAct or CodeAct ``trajectory`` (its step keys) or a name
written both ``example_<name>`` and ``pred_<name>``; a CSV file (``.csv``) whose header has such
columns. What a saved CSV cannot hold is not recovered: a value DSPy wrote with ``str()`` stays
text (an observation that was an object), and a trajectory that is no Python literal is warned
of and not read.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import MAPPINGS, stringify
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import MalformedLine, TranscriptFormatError
from turnfold.formats.frameworks.dspy import (
    REASONING,
    TRAJECTORY,
    DspyBuilder,
    fields_text,
    steps_of,
)
from turnfold.formats.harnesses.inspect_log import score_outcome
from turnfold.formats.source import HEAD_SIZE, Source, plain_value
from turnfold.formats.wording import failure
from turnfold.formats.wrappers import no_such_run, run_place
from turnfold.model import Transcript, UserMessage

NAME = "dspy-evaluate"
#: A file holds one run per example: ``sample=`` picks one by its place.
HAS_SAMPLES = True
#: ``merge_dicts``' names for a field both the example and the prediction hold.
EXAMPLE, PREDICTION = "example_", "pred_"
#: DSPy's own keys of an ``Example`` (``dspy_uuid``, ``dspy_split``): no field of the task.
_OWN = "dspy_"
#: The suffix of the files ``save_as_csv`` is given (any name: the header says what it holds).
CSV_SUFFIX = ".csv"
#: The type of what ``dspy.Evaluate(...)(program)`` returns, and the key of its document
#: (:func:`plain`).
RESULT = "EvaluationResult"
#: How much of a CSV file its detection reads: the header and a first row.
_SNIFF = 64 * 1024

RECORDS = Records(
    mapped={
        "example field": "the example's fields → the UserMessage; example_<name> (a label the "
        'prediction shares) → metadata["target"]',
        "prediction field": "trajectory, reasoning and the output fields (pred_<name>) → as a "
        "saved DSPy Prediction (dspy)",
        "metric": 'the score → metadata["score"], ["scores"], ["outcome"]',
    },
    ignored={
        "dspy_*": "DSPy's own dspy_ keys of an Example",
        "other row": "the other examples' runs: load(path, sample=n) reads each",
    },
)


# --- the rows ---------------------------------------------------------------------------------


def _metric(rows: list[Any]) -> str | None:
    """The name every row ends with, holding a number or a bool: the metric's; None when the
    rows are no Evaluate results."""
    name: str | None = None
    for row in rows:
        if not isinstance(row, MAPPINGS) or not row:
            return None
        last = list(row)[-1]
        score = row[last]
        if (name is not None and last != name) or not _is_score(score):
            return None
        name = last
    return name


def _is_score(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


def _shared(row: Mapping[str, Any]) -> set[str]:
    """The names both the example and the prediction hold (``example_<name>``, ``pred_<name>``)."""
    return {
        key[len(PREDICTION) :]
        for key in row
        if isinstance(key, str) and key.startswith(PREDICTION)
        and f"{EXAMPLE}{key[len(PREDICTION):]}" in row
    }  # fmt: skip


def _marked(row: Any) -> bool:
    """A row only ``Evaluate`` writes: a program's trajectory, or a name the example and the
    prediction share."""
    if not isinstance(row, MAPPINGS):
        return False
    trajectory = row.get(TRAJECTORY)
    return (isinstance(trajectory, MAPPINGS) and steps_of(trajectory) > 0) or bool(_shared(row))


def _starts_prediction(key: Any, shared: set[str]) -> bool:
    return key in (TRAJECTORY, REASONING) or (
        isinstance(key, str) and key.startswith(PREDICTION) and key[len(PREDICTION) :] in shared
    )


def _prediction_start(keys: list[Any], shared: set[str]) -> int | None:
    """Where a row's prediction begins among its ``keys`` (the metric's left out), when its
    names say: at ``trajectory``, ``reasoning`` or a ``pred_`` name."""
    return next((at for at, key in enumerate(keys) if _starts_prediction(key, shared)), None)


@dataclasses.dataclass
class _Fields:
    """The names of the example fields in the rows whose names say where their prediction
    begins: they tell the example's fields of any other row (a devset's examples have the
    same fields)."""

    names: set[Any] = dataclasses.field(default_factory=set)
    #: Of them, those the prediction shared (``example_<name>``): the labels.
    labels: set[str] = dataclasses.field(default_factory=set)

    @classmethod
    def of(cls, rows: list[Any], metric: str) -> _Fields:
        fields = cls()
        for row in rows:
            keys = [key for key in row if key != metric]
            shared = _shared(row)
            start = _prediction_start(keys, shared)
            for key in keys[:start] if start is not None else ():
                label = key[len(EXAMPLE) :] if isinstance(key, str) else None
                if label in shared and key.startswith(EXAMPLE):
                    fields.labels.add(label)
                    fields.names.add(label)
                else:
                    fields.names.add(key)
        return fields


def _split(row: Mapping[str, Any], metric: str, fields: _Fields) -> tuple[list[Any], list[Any]]:
    """The names of a row's example fields and of its prediction's (the module docstring)."""
    keys = [key for key in row if key != metric]
    start = _prediction_start(keys, _shared(row))
    if start is None:
        start = next((at for at, key in enumerate(keys) if key not in fields.names), len(keys))
    return keys[:start], keys[start:]


# --- detection --------------------------------------------------------------------------------


def detect(source: Source) -> Evidence:
    """A JSON array of ``Evaluate`` results (the module docstring)."""
    document = source.document if source.is_document else None
    if not isinstance(document, list) or not document:
        return Evidence.none("no JSON array of DSPy Evaluate results")
    rows = document[:HEAD_SIZE]
    if _metric(rows) is None:
        return Evidence.none("no rows that all end with a metric's score")
    marks = sum(1 for row in rows if _marked(row))
    if not marks:
        return Evidence.none("no row with a trajectory, or an example_/pred_ pair of names")
    return Evidence(share=1.0, marks=marks, sampled=len(rows))


def detect_path(path: Path) -> Evidence | None:
    """A CSV file of ``Evaluate`` results: its header's columns and its first row's score."""
    if path.suffix.lower() != CSV_SUFFIX:
        return None
    try:
        with path.open(encoding="utf-8", newline="") as stream:
            head = stream.read(_SNIFF)
    except (OSError, UnicodeDecodeError):
        return None
    lines = csv.reader(head.splitlines(keepends=True))
    try:
        header = next(lines)
    except (StopIteration, csv.Error):
        return None
    names = dict.fromkeys(header)
    if TRAJECTORY not in names and not _shared(names):
        return None
    try:
        first = next(lines)
    except (StopIteration, csv.Error):  # no row, or one longer than what was read: the header says
        return Evidence(share=1.0, marks=1)
    if len(first) == len(header) and _csv_score(first[-1]) is None:
        return None  # a whole first row that ends with no score: no metric's column
    return Evidence(share=1.0, marks=1)


# --- reading ----------------------------------------------------------------------------------


def _rows_of(source: Source) -> tuple[list[Any], str]:
    """The rows of ``source`` and their metric's name; an error naming the source when it holds
    no Evaluate results."""
    document = source.document if source.is_document else None
    if document is None and source.path is not None and source.path.suffix.lower() == CSV_SUFFIX:
        document = _csv_rows(source.path, source)
    if not isinstance(document, list) or not document:
        raise TranscriptFormatError(
            source.name, [NAME], None, "no JSON array (or CSV) of DSPy Evaluate results"
        )
    metric = _metric(document)
    if metric is None:
        raise TranscriptFormatError(
            source.name, [NAME], None, "not every row ends with the metric's score"
        )
    return document, metric


def _place(source: Source, rows: list[Any], sample: Any) -> int:
    if sample is None:
        if len(rows) > 1:
            held = "result" if _evaluation(source) is not None else "path"
            raise TranscriptFormatError(
                source.name, [NAME], None,
                f"DSPy Evaluate results of {len(rows)} examples, one run each: load one with "
                f"turnfold.load({held}, sample=n), n from 0 to {len(rows) - 1}; turnfold.scan() "
                "makes a row of each",
            )  # fmt: skip
        return 0
    place = run_place(sample)
    if place is None:
        raise ValueError(f"{source.name}: sample= is an example's place (0, 1, …), not {sample!r}")
    if place >= len(rows):
        raise no_such_run(source.name, len(rows), place)
    return place


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The run of the example ``sample`` names (its place, from 0); of a file of one, that one."""
    if epoch is not None:
        raise ValueError(f"{source.name}: DSPy Evaluate results have no epochs; pass sample=")
    evaluation = _evaluation(source)
    if evaluation is not None:
        place = _place(source, evaluation, sample)
        for _ in range(len(evaluation) - 1):
            source.ignored("other row")
        return _result_run(source, evaluation[place], place)
    rows, metric = _rows_of(source)
    place = _place(source, rows, sample)
    for _ in range(len(rows) - 1):
        source.ignored("other row")
    return _run(source, rows[place], place, metric, _Fields.of(rows, metric))


def _run(
    source: Source, row: Mapping[str, Any], place: int, metric: str, fields: _Fields
) -> Transcript:
    """The transcript of one row, the run of the example at ``place``."""
    example, prediction = _split(row, metric, fields)
    shared = _shared(row)
    inputs: list[tuple[str, Any]] = []
    labels: dict[str, Any] = {}
    for key in example:
        name = str(key)
        if name.startswith(_OWN):
            source.ignored("dspy_*")
            continue
        source.mapped("example field")
        if name.startswith(EXAMPLE) and name[len(EXAMPLE) :] in shared:
            labels[name[len(EXAMPLE) :]] = row[key]
        elif name in fields.labels:  # the other rows' label: this row's prediction lacks it
            labels[name] = row[key]
        else:
            inputs.append((name, row[key]))
    source.mapped("metric")
    record = {}
    for key in prediction:
        bare = key[len(PREDICTION) :] if isinstance(key, str) else None
        record[bare if bare in shared and key.startswith(PREDICTION) else key] = row[key]
        source.mapped("prediction field")
    return _example_run(source, place, inputs, labels, record, (metric, row[metric]))


def _example_run(
    source: Source,
    place: int,
    inputs: list[tuple[str, Any]],
    labels: Mapping[str, Any],
    prediction: Mapping[Any, Any],
    scored: tuple[str | None, Any],
) -> Transcript:
    """The run of the example at ``place``: its ``inputs`` the prompt, its ``labels`` the
    target, its ``prediction`` (empty: the program raised) the answer, and its score (under
    the metric's name, None where it is not known) the outcome."""
    metric, score = scored
    transcript = Transcript(metadata={"source_format": NAME, "sample": place})
    if inputs:
        transcript.append(UserMessage(text=fields_text(inputs)))
    if labels:
        transcript.metadata["target"] = next(iter(labels.values())) if len(labels) == 1 else labels
    if prediction:
        DspyBuilder(transcript, source.name).build(prediction)
    else:
        transcript.append(failure("reader.no_prediction", {"score": stringify(score)}))
    _scored(transcript, metric, score, failed=not prediction)
    return transcript


def _scored(transcript: Transcript, metric: str | None, score: Any, *, failed: bool) -> None:
    """The score (None: an in-memory metric's value that is no number, warned of) and what it
    says of the run."""
    metadata = transcript.metadata
    if metric is not None:
        metadata["scores"] = {metric: {"value": score}}
    if score is not None:
        try:
            number = float(score)
        except OverflowError:  # an integer past a float's range
            number = math.inf
        metadata["score"] = number if math.isfinite(number) else score
    outcome = "error" if failed else score_outcome(score)
    if outcome is not None:
        metadata["outcome"] = outcome


def read_each(source: Source) -> Iterator[tuple[str | None, Transcript]]:
    """Every example's run, the file read once, as its place (None when the file holds one,
    which ``load(path)`` reads) and the transcript ``load(path, sample=n)`` gives: the rows a
    scan makes of it (``path#n``), as of an eval log's samples. Each gets its own copy of what
    reading the file found (its warnings, its accounting)."""
    from turnfold.formats import settle_load

    if not source.is_document and source.path is not None:
        source = _csv_source(source.path)  # a scan opened the CSV as JSON lines first
    evaluation = _evaluation(source)
    run: Callable[[Any, int], Transcript]
    if evaluation is not None:
        rows: list[Any] = evaluation
        run = functools.partial(_result_run, source)
    else:
        rows, metric = _rows_of(source)
        run = functools.partial(_run, source, metric=metric, fields=_Fields.of(rows, metric))
    module = sys.modules[__name__]
    warnings, accounting = list(source.warnings), source.accounting.copy()
    for place, row in enumerate(rows):
        source.warnings[:] = warnings
        source.accounting = accounting.copy()
        for _ in range(len(rows) - 1):
            source.ignored("other row")
        transcript = run(row, place)
        yield (str(place) if len(rows) > 1 else None), settle_load(transcript, source, module)


# --- in memory (the EvaluationResult) ---------------------------------------------------------


def plain(value: Any) -> Any:
    """A DSPy ``EvaluationResult`` (what ``dspy.Evaluate(...)(program)`` returns) as the
    document :func:`read` reads: ``{"EvaluationResult": [...]}``, one record per example of its
    ``results`` (``(example, prediction, score)``), in their order. A record holds the
    example's fields, which of them are its inputs (``with_inputs``: what a saved file does not
    say), the prediction as :func:`turnfold.formats.frameworks.dspy.plain` reads it (a
    prediction that is no dict, as ``Evaluate`` saves it, under ``prediction``) and the score
    (a metric's ``Prediction(score=...)`` as its number)."""
    from turnfold.formats.frameworks import dspy

    results = getattr(value, "results", None)
    if type(value).__name__ != RESULT or not isinstance(results, list):
        raise TypeError(
            f"a {type(value).__name__} is no DSPy Evaluate result: load the EvaluationResult "
            "dspy.Evaluate(...)(program) returns, or the files of its save_as_json="
        )
    records: list[Any] = []
    for item in results:
        if not (isinstance(item, tuple) and len(item) == 3):
            records.append(MalformedLine(f"a result that is no (example, prediction, score): "
                                         f"{type(item).__name__}"))  # fmt: skip
            continue
        example, prediction, score = item
        store = getattr(example, "_store", None)
        fields = plain_value(dict(store)) if isinstance(store, dict) else {}
        keys = getattr(example, "_input_keys", None)
        if not callable(getattr(prediction, "items", None)):
            predicted = {"prediction": plain_value(prediction)}
        elif any(cls.__name__ == "Prediction" for cls in type(prediction).__mro__):
            predicted = dspy.plain(prediction)
        else:
            predicted = plain_value(dict(prediction.items()))
        records.append({
            "example": fields,
            "inputs": None if keys is None else [key for key in fields if key in keys],
            "prediction": predicted,
            "score": score if _is_score(score) else _number(score),
        })  # fmt: skip
    return {RESULT: records}


def _number(score: Any) -> float | None:
    """A metric's score that is no number (``dspy.Prediction(score=..., feedback=...)``) as
    one, as ``Evaluate`` sums it; None when it is none."""
    try:
        return float(score)
    except (TypeError, ValueError, OverflowError):
        return None


def _evaluation(source: Source) -> list[Any] | None:
    """The records of an ``EvaluationResult`` in memory (:func:`plain`); None for a file."""
    document = source.document if source.is_document else None
    if isinstance(document, Mapping) and isinstance(document.get(RESULT), list):
        records: list[Any] = document[RESULT]
        return records
    return None


def _result_run(source: Source, record: Any, place: int) -> Transcript:
    """The run of an example of an ``EvaluationResult``: its inputs the prompt (the fields
    ``with_inputs`` named), its other fields the target, as a saved file's example_ names are;
    a result that is no (example, prediction, score) is an error naming its place."""
    if not isinstance(record, Mapping):
        reason = record.reason if isinstance(record, MalformedLine) else "no result"
        raise TranscriptFormatError(source.name, [NAME], None, f"result #{place}: {reason}")
    fields = record.get("example") or {}
    keys = record.get("inputs")
    predicted = record.get("prediction") or {}
    inputs: list[tuple[str, Any]] = []
    labels: dict[str, Any] = {}
    for key, value in fields.items():
        name = str(key)
        if name.startswith(_OWN):
            source.ignored("dspy_*")
            continue
        source.mapped("example field")
        # Without inputs named (an Example never given with_inputs), the labels are the names
        # the prediction holds too, as in a saved file.
        label = key not in keys if keys is not None else key in predicted
        if label:
            labels[name] = value
        else:
            inputs.append((name, value))
    source.mapped("metric")
    for _ in predicted:
        source.mapped("prediction field")
    score = record.get("score")
    if score is None:
        source.warn(f"result #{place}: a score that is no number, not read", None)
    return _example_run(source, place, inputs, labels, predicted, (None, score))


# --- CSV (save_as_csv) ------------------------------------------------------------------------


def read_path(path: Path, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The run of the example ``sample`` names in the CSV file at ``path``, with its warnings
    and accounting."""
    source = _csv_source(path)
    return source.hand_over(read(source, sample=sample, epoch=epoch))


def _csv_source(path: Path) -> Source:
    """The rows of a CSV file of ``Evaluate`` results as a source of one JSON array."""
    source = Source(str(path), iter(()), path=path)
    source.document = _csv_rows(path, source)
    return source


def _csv_rows(path: Path, source: Source) -> list[Any]:
    """The rows of a CSV file as ``save_as_csv`` wrote them, each value as text but the
    trajectory (the Python literal of its dict, read as literals only, never run) and the
    score (``True``, ``False`` or a number)."""
    try:
        with path.open(encoding="utf-8", newline="") as stream:
            table = list(csv.reader(stream))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TranscriptFormatError(str(path), [NAME], None, f"no CSV: {exc}") from None
    if len(table) < 2:
        raise TranscriptFormatError(str(path), [NAME], None, "a CSV of no row")
    header, rows = table[0], []
    for line, cells in enumerate(table[1:], start=2):
        if len(cells) != len(header):
            source.warn(f"row of {len(cells)} cells under {len(header)} columns: not read", line)
            continue
        row: dict[str, Any] = dict(zip(header, cells, strict=True))
        score = _csv_score(cells[-1])
        row[header[-1]] = score if score is not None else cells[-1]
        if row.get(TRAJECTORY):
            row[TRAJECTORY] = _literal(row[TRAJECTORY], line, source)
        rows.append(row)
    return rows


def _csv_score(text: str) -> bool | float | None:
    """A score as ``str()`` wrote it: ``True``, ``False`` or a number; None for other text."""
    if text in ("True", "False"):
        return text == "True"
    try:
        return float(text)
    except ValueError:
        return None


def _literal(text: str, line: int, source: Source) -> Any:
    """A trajectory as ``str(dict)`` wrote it, read as Python literals only; the text, with a
    warning, when it is none (an observation that was an object)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        source.warn("a trajectory that is no Python literal (an object DSPy wrote with str()): "
                    "not read", line)  # fmt: skip
        return text

"""Read the output of Unbabel COMET's ``comet-score`` into a metric column.

The COMET adapter (:class:`~metaeval.textmetrics.COMET`, docs/textmetrics.md,
"COMET, BLEURT and MetricX") computes COMET scores, and reads them back with
:func:`read_comet` when it runs the user's ``comet-score``.  Scores computed
elsewhere are read the same way: :func:`read_comet` turns the output of
``comet-score`` into a long table (``system``, ``input``, score) to join with the
human scores before :meth:`metaeval.Dataset.from_frame`.

Formats read (from ``comet/cli/score.py`` of Unbabel/COMET):

* stdout of COMET >= 2.0 (commit da61b81): one line per segment,
  ``{translations file}\\tSegment {i}\\tscore: {:.4f}``, then one line per
  file, ``{translations file}\\tscore: {:.4f}``;
* stdout of COMET 1.x (commit c67f8be): ``Segment {i}\\tscore: {:.3f}``
  (with ``\\tvariance: {:.3f}`` under ``--mc_dropout``), then
  ``System score: {:.3f}``;
* the ``--to_json`` file: COMET >= 2.0 writes ``{file: [{"src", "mt",
  "ref", "COMET"}, ...]}``, COMET 1.x a list of such records.

The stdout scores are rounded (4 or 3 decimals): ties appear that the model
did not produce, which changes rank correlations; the JSON file has the full
values, so prefer it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError, ParameterError

_SEG2 = re.compile(r"^(?P<file>[^\t]+)\tSegment (?P<i>\d+)\tscore: (?P<score>\S+)\s*$")
_SYS2 = re.compile(r"^(?P<file>[^\t]+)\tscore: (?P<score>\S+)\s*$")
_SEG1 = re.compile(
    r"^Segment (?P<i>\d+)\tscore: (?P<score>\S+)(?:\tvariance: (?P<var>\S+))?\s*$"
)
_SYS1 = re.compile(r"^System score: (?P<score>\S+)\s*$")
_IGNORED = re.compile(r"^(Predictions saved in: .*|\s*)$")


def _float(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: score {text!r} is not a number") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: score {text!r} is not finite")
    return value


def _parse_stdout(text: str, name: str):
    """``{file: {index: score}}``, ``{file: system score}``, ``{file: {index: variance}}``, decimals."""
    segs: dict[str, dict[int, float]] = {}
    variances: dict[str, dict[int, float]] = {}
    system: dict[str, float] = {}
    decimals = 0
    old = new = False
    for lineno, line in enumerate(text.splitlines(), 1):
        where = f"{name}: line {lineno}"
        m = _SEG2.match(line) if not line.startswith("Segment ") else None
        if m:
            new = True
            file, i = m["file"], int(m["i"])
        else:
            m = _SEG1.match(line)
            if m:
                old = True
                file, i = "", int(m["i"])
        if m:
            if i in segs.setdefault(file, {}):
                raise DataError(f"{where}: segment {i} of {file or 'the output'} appears twice")
            segs[file][i] = _float(m["score"], where)
            decimals = max(decimals, len(m["score"].partition(".")[2]))
            if m.groupdict().get("var") is not None:
                variances.setdefault(file, {})[i] = _float(m["var"], where)
            continue
        m = _SYS1.match(line)
        if m:
            old = True
            system[""] = _float(m["score"], where)
            continue
        m = _SYS2.match(line)
        if m:
            new = True
            system[m["file"]] = _float(m["score"], where)
            continue
        if _IGNORED.match(line):
            continue
        raise DataError(
            f"{where} is not comet-score output: {line[:80]!r}; expected 'Segment N<TAB>score: X' "
            "lines (and 'System score: X'), or '<file><TAB>Segment N<TAB>score: X' lines; "
            "keep only comet-score's stdout (its logs go to stderr)"
        )
    if old and new:
        raise DataError(f"{name} mixes the COMET 1.x and 2.x output formats")
    if not segs:
        what = "only system scores (run comet-score without --only_system)" if system else "nothing"
        raise DataError(f"{name} has no segment scores: it holds {what}")
    return segs, system, variances, decimals


def _parse_json(data: Any, name: str) -> dict[str, dict[int, float]]:
    def scores(records, where):
        if not isinstance(records, list):
            raise DataError(f"{where}: expected a list of records, got {type(records).__name__}")
        out = {}
        for i, rec in enumerate(records):
            if not isinstance(rec, Mapping) or "COMET" not in rec:
                raise DataError(f"{where}: record {i} has no 'COMET' score")
            v = rec["COMET"]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise DataError(f"{where}: record {i} has COMET={v!r}, not a finite number")
            out[i] = float(v)
        return out

    if isinstance(data, list):
        return {"": scores(data, name)}
    if isinstance(data, Mapping):
        return {str(k): scores(v, f"{name} [{k!r}]") for k, v in data.items()}
    raise DataError(f"{name}: expected a JSON object or list, got {type(data).__name__}")


def read_comet(
    source: str | os.PathLike[str],
    *,
    system: str | Mapping[str, str] | None = None,
    inputs: Sequence[str] | None = None,
    column: str = "COMET",
    format: str | None = None,
) -> pd.DataFrame:
    """Segment scores of a ``comet-score`` run as a long table.

    Parameters
    ----------
    source : path
        The saved stdout of ``comet-score`` or its ``--to_json`` file.
    system : str or mapping, optional
        System labels.  COMET >= 2.0 names each system by its translations
        file; a mapping renames them (every file must be mapped), a str
        names the only one.  COMET 1.x output has no name: ``system`` is
        required.
    inputs : sequence of str, optional
        Input labels in segment order (as in the dataset); default the
        segment indices ``"0"``, ``"1"``, ...
    column : str
        Name of the score column.
    format : {"stdout", "json"}, optional
        Default: ``"json"`` for a ``.json`` file, else ``"stdout"``.

    Returns
    -------
    DataFrame
        Columns ``system``, ``input``, ``column`` (float64), and
        ``column + "_variance"`` when the output has MC-dropout variances;
        one row per system x segment.  ``attrs["system_scores"]`` holds the
        system scores printed (stdout) or computed as the segment mean
        (JSON), ``attrs["decimals"]`` the printed precision (None for JSON).

    Raises
    ------
    DataError
        Lines that are not comet-score output, missing or repeated segment
        indices, systems with different numbers of segments, a printed
        system score that is not the mean of its segments (to the printed
        precision), ``inputs`` of the wrong length.
    ParameterError
        Bad ``system``, ``format``.

    Examples
    --------
    >>> import tempfile, os
    >>> out = "hyp.txt\\tSegment 0\\tscore: 0.8123\\nhyp.txt\\tSegment 1\\tscore: 0.6877\\nhyp.txt\\tscore: 0.7500\\n"
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "comet.out")
    ...     with open(path, "w") as f:
    ...         _ = f.write(out)
    ...     read_comet(path, system={"hyp.txt": "A"}, inputs=["x", "y"])
      system input   COMET
    0      A     x  0.8123
    1      A     y  0.6877
    """
    path = Path(source)
    if format is None:
        format = "json" if path.name.lower().endswith(".json") else "stdout"
    if format not in ("stdout", "json"):
        raise ParameterError(f"format={format!r}; choose 'stdout' or 'json'")
    if not isinstance(column, str) or not column:
        raise ParameterError(f"column={column!r} must be a non-empty str")
    text = path.read_text(encoding="utf-8")
    variances: dict = {}
    if format == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path.name} is not JSON ({exc.msg}, line {exc.lineno})") from None
        segs = _parse_json(data, path.name)
        printed: dict[str, float] = {}
        decimals = None
    else:
        segs, printed, variances, decimals = _parse_stdout(text, path.name)
    files = list(segs)
    for f in files:
        idx = sorted(segs[f])
        if idx != list(range(len(idx))):
            gaps = sorted(set(range(max(idx) + 1)) - set(idx))[:5]
            raise DataError(
                f"{path.name}: segments of {f or 'the output'} are not 0..{len(idx) - 1}; "
                f"missing {gaps} (a truncated or edited file?)"
            )
    n_seg = {f: len(segs[f]) for f in files}
    if len(set(n_seg.values())) > 1:
        raise DataError(f"{path.name}: systems have different numbers of segments: {n_seg}")
    # the printed system score is the segment mean (comet-score computes it so)
    for f, value in printed.items():
        if f not in segs:
            raise DataError(f"{path.name}: a system score for {f!r}, which has no segments")
        mean = sum(segs[f].values()) / len(segs[f])
        # each printed value is off by at most half a unit of the last digit
        tol = 10.0 ** -(decimals or 0) + 1e-12
        if abs(mean - value) > tol:
            raise DataError(
                f"{path.name}: the system score of {f or 'the output'} ({value}) is not the mean "
                f"of its {len(segs[f])} segment scores ({mean:.6f}); the file is incomplete or "
                "from several runs"
            )
    # system labels
    if isinstance(system, Mapping):
        missing = [f for f in files if f not in system]
        if missing:
            raise ParameterError(
                f"system= does not map {', '.join(map(repr, missing))}; the output names "
                f"{', '.join(map(repr, files))}"
            )
        labels = {f: str(system[f]) for f in files}
    elif isinstance(system, str):
        if len(files) != 1:
            raise ParameterError(
                f"system={system!r} names one system, and the output has {len(files)}: pass a "
                f"mapping from {', '.join(map(repr, files))} to system labels"
            )
        labels = {files[0]: system}
    elif system is None:
        if "" in files:
            raise ParameterError(
                "this comet-score output (COMET 1.x format, or a JSON list) does not name its "
                "system: pass system='<label>'"
            )
        labels = {f: f for f in files}
    else:
        raise ParameterError(f"system={system!r} must be a str or a mapping")
    n = next(iter(n_seg.values()))
    if inputs is None:
        input_labels = [str(i) for i in range(n)]
    else:
        input_labels = [str(x) for x in inputs]
        if len(input_labels) != n:
            raise DataError(
                f"inputs= has {len(input_labels)} labels and the output {n} segments per system"
            )
        if len(set(input_labels)) != n:
            raise DataError("inputs= has repeated labels")
    rows = []
    for f in files:
        for i in range(n):
            row = {"system": labels[f], "input": input_labels[i], column: segs[f][i]}
            if variances:
                row[f"{column}_variance"] = variances.get(f, {}).get(i, math.nan)
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame[column] = frame[column].astype("float64")
    frame.attrs["system_scores"] = {
        labels[f]: (printed[f] if f in printed else sum(segs[f].values()) / n) for f in files
    }
    frame.attrs["decimals"] = decimals
    return frame

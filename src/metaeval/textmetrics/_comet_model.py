"""COMET (Rei et al. 2020, 2022) scores computed by Unbabel's ``unbabel-comet``.

Two backends compute the same scores from the same model:

* ``"python"``: in this process, through COMET's own Python API
  (``comet.load_from_checkpoint(...).predict(...)``), when the package imports
  here and works (it needs ``transformers<5``);
* ``"comet-score"``: through the user's own ``comet-score`` executable (COMET
  installed in another environment): the work items go to temporary text files
  (``-s``/``-t``/``-r``, one line per item), COMET writes ``--to_json``, and
  :func:`~metaeval.textmetrics.read_comet` reads the full-precision scores back.

``comet-score`` casts the model to half precision (``model.half()`` in
``comet/cli/score.py``), so its scores are fp16 scores; the in-process default is
COMET's Python API default, fp32.  ``precision`` says which, enters the signature
and the cache key, and ``precision="fp16"`` in process reproduces ``comet-score``.

Install recipe and why ``--no-deps``: docs/textmetrics.md, "Installing COMET and
BLEURT".
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailableError, ExternalCommandError, ParameterError
from ._base import TextMetric, check_choice, check_positive_int, folder_fingerprint, library_version

#: Where the install recipe is: named by every "not available" message.
RECIPE = ('the recipe in docs/textmetrics.md, "Installing COMET and BLEURT" (pip install '
          '"metaeval[comet]" && pip install --no-deps unbabel-comet==2.2.7)')

#: Environment variable naming a ``comet-score`` executable (default: ``comet-score`` on PATH).
EXECUTABLE_ENV = "METAEVAL_COMET_SCORE"

BACKENDS = ("auto", "python", "comet-score")
PRECISIONS = ("fp32", "fp16")

# One loaded model per (checkpoint, fingerprint, precision) and process.
_MODELS: dict[tuple, object] = {}

_LOGGERS = ("lightning", "lightning.pytorch", "lightning.fabric", "lightning_fabric",
            "pytorch_lightning", "comet")


def clean_text(text: str) -> str:
    """A text as ``comet-score`` reads it: line breaks become spaces, ends are stripped.

    ``comet-score`` reads one segment per line (``readlines()`` then ``strip()``), so a
    text with a line break would shift every later segment; both backends feed COMET
    this form, so they score the same strings.
    """
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").strip()


@contextlib.contextmanager
def quiet_lightning():
    """Silence PyTorch Lightning's banners and the deprecation chatter of COMET's stack."""
    saved = {}
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        saved[name] = logger.level
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", module=r"(pytorch_lightning|lightning|lightning_fabric|torchmetrics"
                r"|pkg_resources|comet)(\.|$)")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def transformers_major() -> int | None:
    """Major version of the installed transformers (None when absent)."""
    version = library_version("transformers")
    m = re.match(r"(\d+)\.", version)
    return int(m.group(1)) if m else None


def transformers4_problem(module: str, package: str, importing=contextlib.nullcontext) -> str | None:
    """None when ``module`` (of the distribution ``package``, which needs transformers<5)
    imports in this process, else why not (one clause): not installed, transformers 5, or
    the import's own error.  ``importing`` is a context manager around the import."""
    if importlib.util.find_spec(module) is None:
        return f"the {package} package is not installed in this environment"
    major = transformers_major()
    if major is not None and major >= 5:
        return (f"{package} needs transformers<5 and this environment has transformers "
                f"{library_version('transformers')}")
    try:
        with importing():
            importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any failure means: not usable here
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"import {module} fails ({type(exc).__name__}: {detail})"
    return None


@functools.cache
def python_backend_problem() -> str | None:
    """None when COMET can score in this process, else the reason it cannot (one clause)."""
    if importlib.util.find_spec("comet") is not None and library_version("unbabel-comet") == "unknown":
        return "the 'comet' module here is not unbabel-comet"
    return transformers4_problem("comet", "unbabel-comet", importing=quiet_lightning)


def find_executable(executable=None) -> str | None:
    """The ``comet-score`` to run: ``executable``, else $METAEVAL_COMET_SCORE, else PATH."""
    name = executable if executable is not None else os.environ.get(EXECUTABLE_ENV) or "comet-score"
    found = shutil.which(str(name))
    if found is None and Path(str(name)).is_file() and os.access(str(name), os.X_OK):
        found = str(name)
    return None if found is None else str(Path(found).resolve())


@functools.cache
def executable_version(executable: str) -> str:
    """unbabel-comet's version in the environment of a ``comet-score`` script.

    Read by running the interpreter on the script's ``#!`` line (a console script of
    pip); ``"unknown"`` when that is not possible.
    """
    try:
        with open(executable, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return "unknown"
    if not first.startswith(b"#!"):
        return "unknown"
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        words = [shutil.which(words[1]) or words[1]]
    if not words or "python" not in os.path.basename(words[0]):
        return "unknown"
    try:
        out = subprocess.run(
            [words[0], "-c", "import importlib.metadata as m; print(m.version('unbabel-comet'))"],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    version = out.stdout.strip()
    return version if out.returncode == 0 and re.fullmatch(r"[\w.+-]+", version) else "unknown"


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def resolve_model(model) -> dict:
    """Where a COMET model is: a local checkpoint (with its ``hparams.yaml``) or a hub name."""
    if not isinstance(model, (str, os.PathLike)) or not str(model):
        raise ParameterError(
            f"model={model!r} must be a COMET model name (e.g. 'Unbabel/wmt22-comet-da') or the "
            "path of a local COMET model (its folder or its checkpoints/model.ckpt)"
        )
    text = str(model)
    path = Path(text).expanduser()
    if path.exists():
        if path.is_dir():
            ckpt = path / "checkpoints" / "model.ckpt"
            if not ckpt.is_file():
                raise ParameterError(
                    f"model={text!r} is a folder without checkpoints/model.ckpt; pass a COMET model "
                    "folder (hparams.yaml and checkpoints/model.ckpt, as COMET's download_model "
                    "writes it) or the .ckpt file"
                )
        elif path.suffix == ".ckpt":
            ckpt = path
        else:
            raise ParameterError(
                f"model={text!r} is a file but not a COMET checkpoint (.ckpt); pass the model "
                "folder or its checkpoints/model.ckpt"
            )
        ckpt = ckpt.resolve()
        folder = ckpt.parents[1]
        hparams = folder / "hparams.yaml"
        if not hparams.is_file():
            raise ParameterError(
                f"model={text!r}: {hparams} is missing; COMET reads the model class from the "
                "hparams.yaml two folders above the checkpoint"
            )
        m = re.search(r"^class_identifier:\s*['\"]?([\w-]+)", hparams.read_text(encoding="utf-8"),
                      re.MULTILINE)
        return {"local": True, "ckpt": str(ckpt), "folder": folder,
                "label": f"{folder.name}@{folder_fingerprint(folder)}",
                "class": m.group(1) if m else None, "arg": str(ckpt)}
    if text.startswith(("/", ".", "~")) or text.endswith(".ckpt") or not _HUB_NAME.fullmatch(text):
        raise ParameterError(
            f"model={text!r} does not exist; give an existing COMET model folder or .ckpt file, "
            "or a model name such as 'Unbabel/wmt22-comet-da'"
        )
    return {"local": False, "ckpt": None, "folder": None, "label": text, "class": None, "arg": text}


class COMET(TextMetric):
    """COMET scores from Unbabel's ``unbabel-comet``, in process or through ``comet-score``.

    Each (hypothesis, reference) pair is scored with the segment's source, as
    ``comet-score -s SRC -t HYP -r REF`` does; several references are scored one by one
    and aggregated by ``multi_ref`` (COMET has no multi-reference score).  A
    reference-free model (CometKiwi: ``class_identifier:
    referenceless_regression_metric``) reads only the source.

    Parameters
    ----------
    model : str or Path
        A local COMET model, its folder (``hparams.yaml`` and
        ``checkpoints/model.ckpt``, the layout of COMET's ``download_model``) or the
        ``.ckpt`` file, or a model name (``"Unbabel/wmt22-comet-da"``), which COMET
        resolves through the Hugging Face cache (downloading it when absent, unless
        ``HF_HUB_OFFLINE=1``).  COMET loads the encoder's tokenizer and config named
        in ``hparams.yaml`` (``xlm-roberta-large`` for most models) the same way.
    batch_size : int
        COMET's batch size (``predict(batch_size=)``, ``comet-score --batch_size``); 16,
        as COMET.
    device : str, optional
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; default: a GPU when torch sees one, else
        the CPU.
    precision : {"fp32", "fp16"}, optional
        fp32 (COMET's Python API) by default in process; ``comet-score`` always casts to
        fp16, so the ``comet-score`` backend is fp16 only.  ``precision="fp16"`` in
        process reproduces ``comet-score``.
    backend : {"auto", "python", "comet-score"}
        ``"auto"``: in process when unbabel-comet imports here and can run (with
        ``transformers<5``), else ``comet-score``.
    executable : str or Path, optional
        The ``comet-score`` to run (default: ``$METAEVAL_COMET_SCORE``, else
        ``comet-score`` on the PATH): e.g. ``/opt/comet-env/bin/comet-score``.
    reference_free : bool, optional
        Whether the model reads only the source; default: read from the local model's
        ``hparams.yaml``, False for a model name (pass True for a CometKiwi name).
    chunk_size : int, optional
        Work items per ``predict`` call or ``comet-score`` run, cached as each finishes
        (256 in process; 2048 through ``comet-score``, which loads the model once per run).
    name : str, optional
        Column name (default ``"comet"``).

    Notes
    -----
    Texts are given to COMET as ``comet-score`` reads them from its files: line
    breaks inside a text become spaces and the ends are stripped (:func:`clean_text`),
    in both backends.  Scores are COMET's segment scores (``Prediction.scores``); the
    system score that COMET prints is their mean, which is metaeval's ``system`` level.
    """

    kind = "comet"
    library = "unbabel-comet"
    batch_size = 16
    version = 1

    def __init__(self, model, *, batch_size: int | None = None, device: str | None = None,
                 precision: str | None = None, backend: str = "auto", executable=None,
                 reference_free: bool | None = None, chunk_size: int | None = None,
                 name: str | None = None):
        super().__init__(name=name, batch_size=batch_size)
        self._spec = resolve_model(model)
        self.model = self._spec["arg"]
        check_choice(backend, "backend", BACKENDS)
        if device is not None and (not isinstance(device, str)
                                   or not re.fullmatch(r"cpu|cuda(:\d+)?", device)):
            raise ParameterError(f"device={device!r}; give 'cpu', 'cuda' or 'cuda:N' (or None: "
                                 "a GPU when torch sees one)")
        self.device = device
        if precision is not None:
            check_choice(precision, "precision", PRECISIONS)
        if reference_free is None:
            reference_free = self._spec["class"] == "referenceless_regression_metric"
        elif not isinstance(reference_free, bool):
            raise ParameterError(f"reference_free={reference_free!r} must be True, False or None")
        self.reference_free = reference_free
        self._chunk = None if chunk_size is None else check_positive_int(chunk_size, "chunk_size")
        self.executable = None
        problem = None if backend == "comet-score" else python_backend_problem()
        if backend == "python" and problem is not None:
            raise BackendUnavailableError(
                f"COMET cannot run in this process: {problem}; install it with {RECIPE}, or use "
                "backend='comet-score' with COMET installed elsewhere")
        if backend == "comet-score" or (backend == "auto" and problem is not None):
            self.executable = find_executable(executable)
            if self.executable is None:
                where = (f"{executable!s}" if executable is not None
                         else f"${EXECUTABLE_ENV}" if os.environ.get(EXECUTABLE_ENV)
                         else "comet-score on the PATH")
                first = "" if backend == "comet-score" else f"in process: {problem}; "
                raise BackendUnavailableError(
                    f"COMET is not available: {first}no comet-score executable ({where} not "
                    f"found); install COMET with {RECIPE}, or set ${EXECUTABLE_ENV} to the "
                    "comet-score of an environment that has it")
            self.backend = "comet-score"
            if precision == "fp32":
                raise ParameterError(
                    "precision='fp32' cannot be had through comet-score, which casts the model to "
                    "fp16 (model.half()); use precision='fp16' (or None), or the in-process "
                    "backend ('python')")
            self.precision = "fp16"
        else:
            self.backend = "python"
            self.precision = precision or "fp32"

    # ---------------------------------------------------------------- what it reads
    @property
    def uses(self) -> str:
        return "source" if self.reference_free else "source+references"

    @property
    def chunk_size(self) -> int:
        if self._chunk is not None:
            return self._chunk
        return 2048 if self.backend == "comet-score" else 256

    def options(self):
        return {"model": self._spec["label"], "prec": self.precision}

    def library_version(self) -> str:
        if self.backend == "comet-score":
            return executable_version(self.executable)
        return library_version(self.library)

    def __repr__(self) -> str:
        return (f"COMET(model={self.model!r}, backend={self.backend!r}, "
                f"precision={self.precision!r}, batch_size={self.batch_size})")

    # ---------------------------------------------------------------- scoring
    def _device(self) -> str:
        if self.device is not None:
            return self.device
        if importlib.util.find_spec("torch") is None:
            return "auto"
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def samples(self, hypotheses, contexts) -> list[dict]:
        """COMET's input records (``src``, ``mt`` and, with references, ``ref``)."""
        out = []
        for hyp, ctx in zip(hypotheses, contexts):
            if self.reference_free:
                out.append({"src": clean_text(ctx), "mt": clean_text(hyp)})
            else:
                src, ref = ctx
                out.append({"src": clean_text(src), "mt": clean_text(hyp), "ref": clean_text(ref)})
        return out

    def score_batch(self, hypotheses, contexts):
        samples = self.samples(hypotheses, contexts)
        if self.backend == "python":
            scores = self._predict(samples)
        else:
            scores = self._comet_score(samples)
        return np.asarray(scores, dtype=np.float64).reshape(-1, 1)

    def load(self):
        """The COMET model, loaded once per process (COMET's ``load_from_checkpoint``)."""
        key = (self._spec["arg"], self._spec["label"], self.precision)
        model = _MODELS.get(key)
        if model is None:
            problem = python_backend_problem()
            if problem is not None:
                raise BackendUnavailableError(f"COMET cannot run in this process: {problem}; "
                                              f"install it with {RECIPE}")
            with quiet_lightning():
                comet = importlib.import_module("comet")
                path = self._spec["ckpt"] or comet.download_model(self._spec["arg"])
                model = comet.load_from_checkpoint(path)
            model.eval()
            if self.precision == "fp16":
                model.half()
            model = _MODELS[key] = model
        if self.reference_free and model.requires_references():
            raise ParameterError(
                f"model={self.model!r} needs references (its class is {type(model).__name__}); "
                "use reference_free=False")
        if not self.reference_free and type(model).__name__ == "ReferencelessRegression":
            raise ParameterError(
                f"model={self.model!r} is reference-free (it reads only the source); pass "
                "reference_free=True")
        return model

    def _predict(self, samples):
        model = self.load()
        device = self._device()
        if device in ("cpu", "auto"):
            kwargs = {"gpus": 0, "accelerator": "cpu"}
        else:
            index = device.partition(":")[2]
            kwargs = {"gpus": 1, "accelerator": "gpu", "devices": [int(index)] if index else None}
        with quiet_lightning():
            out = model.predict(samples, batch_size=self.batch_size, progress_bar=False, **kwargs)
        return out.scores

    def _comet_score(self, samples):
        from ._comet import read_comet

        device = self._device()
        env = os.environ.copy()
        if device == "cpu":
            gpus = "0"
        else:
            gpus = "1"  # comet-score's default: Lightning takes a GPU when there is one
            if ":" in device:
                env["CUDA_VISIBLE_DEVICES"] = device.partition(":")[2]
        with tempfile.TemporaryDirectory(prefix="metaeval-comet-") as tmp:
            files = {"src": "src.txt", "mt": "mt.txt"}
            if not self.reference_free:
                files["ref"] = "ref.txt"
            for key, name in files.items():
                with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n") as f:
                    f.write("".join(s[key] + "\n" for s in samples))
            path = {key: os.path.join(tmp, name) for key, name in files.items()}
            out_json = os.path.join(tmp, "comet.json")
            cmd = [self.executable, "-s", path["src"], "-t", path["mt"]]
            if "ref" in path:
                cmd += ["-r", path["ref"]]
            cmd += ["--model", self._spec["arg"], "--batch_size", str(self.batch_size),
                    "--gpus", gpus, "--quiet", "--to_json", out_json]
            # run where the user runs metaeval, as the user would run comet-score (a model's
            # hparams.yaml may name its encoder by a relative path)
            proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, errors="replace")
            if proc.returncode != 0:
                lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
                last = lines[-1].strip() if lines else "no message"
                raise ExternalCommandError(
                    f"comet-score ({self.executable}) failed with exit status {proc.returncode}: "
                    f"{last}", returncode=proc.returncode, stderr=proc.stderr)
            frame = read_comet(out_json, format="json")
        if len(frame) != len(samples):
            raise ExternalCommandError(
                f"comet-score ({self.executable}) returned {len(frame)} scores for "
                f"{len(samples)} segments", stderr=proc.stderr)
        return frame["COMET"].to_numpy()

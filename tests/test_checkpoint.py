"""Checkpoint units are plain data (issue 18.4).

Units used to be pickles: a planted unit ran code on resume, a corrupt unit
gave a traceback (or click's bare ``Aborted!``) without naming the file, and
with ``run.json`` deleted a 100-resample run reused the units of a
200-resample run.  Expected values here are uninterrupted runs of the same
analysis in a fresh folder (or none): a resumed run must equal them bit for
bit.
"""

import hashlib
import json
import pickle

import numpy as np
import pytest
from click.testing import CliRunner

import metaeval
from metaeval import Dataset
from metaeval._parallel import Checkpoint
from metaeval.cli import main
from metaeval.errors import ParameterError


def _dataset(seed=0, N=5, M=8, K=3):
    g = np.random.default_rng(seed)
    z = g.normal(size=(N, M))
    metrics = {f"m{k}": z * (k % 2) + g.normal(size=(N, M)) * (k + 1) for k in range(K)}
    return Dataset.from_arrays({"human": z, **metrics}, human=["human"])


KW = dict(measures=["input:spearman", "global:kendall_b"], rng=5)


def _unit_files(folder):
    return sorted(folder.glob("*.npz"))


class _Planted:
    """Unpickling this writes ``marker``: the proof that loading ran code."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _same(a, b):
    """Bit-identical trees: same types, shapes, dtypes and bytes (NaN == NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes()
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b


def test_units_round_trip_bit_identical(tmp_path):
    # adversarial floats: NaN, signed zero, infinities, subnormals, extremes,
    # values whose shortest repr has 17 digits
    g = np.random.default_rng(0)
    odd = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308,
                    0.1 + 0.2, 1 / 3, -2.2250738585072014e-308])
    unit = {
        0: (g.normal(size=(2, 3, 4)), np.array([1, 2, 3], np.int64)),
        7: (odd, np.zeros(0)),
        "meta": [0.1 + 0.2, float("nan"), -0.0, 1e-310, 2**70, True, None, "pair\x1fa\x1fb"],
        "scalars": (np.float64(1 / 3), np.int64(-5), np.float32(0.1), np.bool_(True)),
        "f32": g.normal(size=5).astype(np.float32),
        "fortran": np.asfortranarray(g.normal(size=(3, 2))),
        "empty": (),
    }
    ck = Checkpoint(tmp_path, {"analysis": "test"})
    ck.save("u", unit)
    found, back = ck.load("u")
    assert found
    _same(unit, back)
    assert ck.n_done() == 1
    assert not list(tmp_path.glob("*.pkl"))


def test_units_refuse_objects_that_need_pickle(tmp_path):
    ck = Checkpoint(tmp_path, {"analysis": "test"})
    with pytest.raises(TypeError, match="object arrays"):
        ck.save("u", np.array([{"a": 1}], dtype=object))
    with pytest.raises(TypeError, match="plain data"):
        ck.save("u", {1, 2})
    assert not _unit_files(tmp_path)


def test_planted_pickle_unit_does_not_execute(tmp_path):
    """Regression (18.4): a planted unit ran code on resume."""
    ds = _dataset()
    fresh = metaeval.discriminative_power(ds, "human", n_resamples=30, **KW)
    folder = tmp_path / "ck"
    metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder, **KW)
    units = _unit_files(folder)
    assert len(units) == 3
    marker = tmp_path / "marker"
    payload = pickle.dumps(_Planted(marker))
    # the payload works: unpickling it does write the marker
    pickle.loads(payload)
    assert marker.exists()
    marker.unlink()

    # 1. a pickle in place of a unit: refused with the file named, nothing runs
    units[0].write_bytes(payload)
    with pytest.raises(ParameterError, match=rf"checkpoint unit .*{units[0].name}.*delete this file"):
        metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder, **KW)
    assert not marker.exists()

    # 2. an .npz whose array holds a pickled object (np.save's object dtype),
    #    with a header that claims to be this run's unit
    ck = Checkpoint(tmp_path / "solo", {"analysis": "test"})
    ck.save("u", np.zeros(2))
    header = {"format": "metaeval-checkpoint-unit/1", "run": ck.run_id, "name": "u",
              "tree": {"t": "array", "i": 0}}
    obj = np.empty(1, dtype=object)
    obj[0] = _Planted(marker)
    with open(ck._path("u"), "wb") as f:
        np.savez(f, a0=obj, __unit__=np.frombuffer(json.dumps(header).encode(), np.uint8))
    with pytest.raises(ParameterError, match="checkpoint unit .*unreadable"):
        ck.load("u")
    assert not marker.exists()

    # 3. pickles where older versions kept their units (.pkl) are never opened:
    #    the units are recomputed and the result equals a fresh run
    folder2 = tmp_path / "legacy"
    names = [f"pair\x1f{a}\x1f{b}" for a, b in fresh.pairs]
    folder2.mkdir()
    for nm in names:
        (folder2 / (hashlib.sha1(nm.encode()).hexdigest()[:20] + ".pkl")).write_bytes(payload)
    got = metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder2, **KW)
    assert not marker.exists()
    np.testing.assert_array_equal(got.pvalues, fresh.pvalues)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_unit_is_a_named_error(tmp_path, damage):
    """Regression (18.4): a corrupt unit gave a traceback without the file's name."""
    ds = _dataset()
    folder = tmp_path / "ck"
    metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder, **KW)
    unit = _unit_files(folder)[1]
    data = unit.read_bytes()
    unit.write_bytes({"truncate": data[: len(data) // 2], "garbage": b"\x00junk" * 50,
                      "empty": b""}[damage])
    with pytest.raises(ParameterError) as err:
        metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder, **KW)
    msg = str(err.value)
    assert str(unit) in msg and "delete this file" in msg and "\n" not in msg
    # deleting it, as the message says, resumes to the uninterrupted numbers
    unit.unlink()
    got = metaeval.discriminative_power(ds, "human", n_resamples=30, checkpoint=folder, **KW)
    fresh = metaeval.discriminative_power(ds, "human", n_resamples=30, **KW)
    np.testing.assert_array_equal(got.pvalues, fresh.pvalues)


def test_corrupt_unit_cli_exit_2_names_the_file(tmp_path):
    """Regression (18.4): the CLI printed a traceback or ``Aborted!`` (a
    truncated pickle raises EOFError, which click turns into an abort)."""
    out = tmp_path / "run"
    args = ["measures", "summeval", "--human", "coherence", "--metrics", "ROUGE.1,ROUGE.2,BLEU",
            "--measures", "system:pearson", "--n-resamples", "20", "--splits", "5",
            "--out", str(out), "--format", "json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    unit = _unit_files(out / "checkpoints" / "dp")[0]
    unit.write_bytes(unit.read_bytes()[:40])
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("metaeval: error: checkpoint unit")
    assert unit.name in lines[0] and "delete this file" in lines[0]
    assert "Aborted" not in res.output and "Traceback" not in res.output


def test_run_json_deleted_other_n_resamples_units_not_reused(tmp_path):
    """Regression (18.4): with run.json deleted, a 100-resample run silently
    reused a 200-resample run's units while its signature said n:100."""
    ds = _dataset()
    folder = tmp_path / "ck"
    r200 = metaeval.discriminative_power(ds, "human", n_resamples=200, checkpoint=folder, **KW)
    (folder / "run.json").unlink()
    r100 = metaeval.discriminative_power(ds, "human", n_resamples=100, checkpoint=folder, **KW)
    fresh100 = metaeval.discriminative_power(ds, "human", n_resamples=100, **KW)
    # the test can fail: the two resample counts give different p-values
    assert not np.array_equal(r200.pvalues, fresh100.pvalues)
    np.testing.assert_array_equal(r100.pvalues, fresh100.pvalues)
    assert "n:100" in r100.signature
    # the stale units were overwritten: a resumed 100-resample run still agrees
    again = metaeval.discriminative_power(ds, "human", n_resamples=100, checkpoint=folder, **KW)
    np.testing.assert_array_equal(again.pvalues, fresh100.pvalues)
    # the same for ranking consistency (units are metrics)
    rc_folder = tmp_path / "rc"
    metaeval.ranking_consistency(ds, "human", n_splits=40, checkpoint=rc_folder, **KW)
    (rc_folder / "run.json").unlink()
    rc = metaeval.ranking_consistency(ds, "human", n_splits=20, checkpoint=rc_folder, **KW)
    fresh_rc = metaeval.ranking_consistency(ds, "human", n_splits=20, **KW)
    np.testing.assert_array_equal(rc.half_statistics, fresh_rc.half_statistics)


def test_resumed_simulation_units_bit_identical(tmp_path):
    """Simulation units are dicts of (array, array) tuples keyed by int."""
    kw = dict(rho_sys=[0.3, 0.6], n_systems=4, n_inputs=10, n_iterations=150, rng=5,
              keep_values=True)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = metaeval.simulate(**kw)
        metaeval.simulate(checkpoint=tmp_path, **kw)
        resumed = metaeval.simulate(checkpoint=tmp_path, **kw)
    for a, b in zip(full.values, resumed.values):
        assert a.tobytes() == b.tobytes()
    np.testing.assert_array_equal(full.n_groups_dropped, resumed.n_groups_dropped)

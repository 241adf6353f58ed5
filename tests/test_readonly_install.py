"""A read-only install with no writable home (issues 18.9, 14.5).

A container run with ``--user`` on a read-only package directory failed on
every command, ``--help`` included: numba found no writable cache location
(``RuntimeError: cannot cache function ...: no locator available``).

The test copies the package to a read-only folder and runs the CLI from it
in a subprocess whose HOME is read-only and NUMBA_CACHE_DIR unset.  As root,
file modes do not block writes, so the subprocess runs under ``setpriv``
without the capabilities that bypass them (CAP_DAC_OVERRIDE,
CAP_DAC_READ_SEARCH), as a container ``--user`` would; the test first checks
that writing into the copy really fails, and skips (saying why) when that
cannot be arranged.  Expected numbers: scipy.stats.pearsonr of the system
means.
"""

import io
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

SRC = Path(__file__).resolve().parents[1] / "src" / "metaeval"


def _read_only(root: Path):
    for d, dirs, files in os.walk(root):
        for f in files:
            os.chmod(os.path.join(d, f), 0o444)
        os.chmod(d, 0o555)


def _writable_again(root: Path):
    for d, dirs, files in os.walk(root):
        os.chmod(d, 0o755)


@pytest.fixture
def sandbox(tmp_path):
    pkg = tmp_path / "site"
    shutil.copytree(SRC, pkg / "metaeval", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    home = tmp_path / "home"
    home.mkdir()
    _read_only(pkg)
    _read_only(home)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    prefix = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            _writable_again(pkg), _writable_again(home)
            pytest.skip("running as root without setpriv: cannot make the copy read-only")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "XDG_")) and k not in ("PYTHONPATH", "HOME", "TMPDIR")}
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1")

    def run(*code_and_args):
        return subprocess.run([*prefix, sys.executable, *code_and_args], capture_output=True,
                              text=True, env=env, cwd=str(tmp), timeout=600)

    probe = run("-c", f"open({str(pkg / 'metaeval' / 'probe')!r}, 'w')")
    if probe.returncode == 0:
        _writable_again(pkg), _writable_again(home)
        pytest.skip("the read-only copy is writable here (cannot simulate a read-only install)")
    assert "Permission denied" in probe.stderr or "Read-only" in probe.stderr, probe.stderr
    yield run, tmp, pkg
    _writable_again(pkg)
    _writable_again(home)


CLI = "import sys; from metaeval.cli import main; sys.argv[0] = 'metaeval'; main()"


def test_read_only_install_without_writable_home_runs(sandbox):
    """Regression (18.9, 14.5): every command failed with numba's 'no locator available'."""
    run, tmp, pkg = sandbox
    # where it comes from: the copy (not the checkout)
    where = run("-c", "import metaeval; print(metaeval.__file__)")
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(pkg))
    helped = run("-c", CLI, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "Usage:" in helped.stdout
    res = run("-c", CLI, "correlate", "summeval", "--human", "coherence", "--metrics", "ROUGE.1",
              "--level", "system", "--method", "pearson,kendall_b", "--ci", "none", "--format", "csv")
    # (kendall_b needs the numba kernels: a Pearson of 16 system means alone loads no numba since
    # issue 26.2, and the regression is about numba's cache locator)
    assert res.returncode == 0, res.stderr
    assert "no locator" not in res.stderr
    got = pd.read_csv(io.StringIO(res.stdout))
    # the kernels were cached in the private per-user folder under TMPDIR
    cache = tmp / f"metaeval-numba-{os.getuid()}"
    assert cache.is_dir() and stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert any(cache.rglob("*.nbi"))

    import metaeval

    ds = metaeval.load_dataset("summeval")
    z = np.nanmean(ds.scores("coherence"), axis=1)
    x = np.nanmean(ds.scores("ROUGE.1"), axis=1)
    want = scipy.stats.pearsonr(x, z).statistic
    row = got[(got["level"] == "system") & (got["method"] == "pearson")]
    assert len(row) == 1
    assert row["statistic"].iloc[0] == pytest.approx(want, rel=1e-12)
    tau = got[(got["level"] == "system") & (got["method"] == "kendall_b")]["statistic"].iloc[0]
    assert tau == pytest.approx(scipy.stats.kendalltau(x, z).statistic, rel=1e-12)


def test_private_cache_dir_not_ours_is_not_used(tmp_path, monkeypatch):
    """A pre-made folder of the fallback's name that others can write (or a
    symlink) is not trusted: numba's cache index is read with pickle."""
    from metaeval.stats import _jit

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    planted = tmp_path / f"metaeval-numba-{os.getuid()}"
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    got = _jit._private_cache_dir()
    assert got is not None and Path(got) != planted and Path(got).parent == tmp_path
    assert stat.S_IMODE(os.stat(got).st_mode) == 0o700
    planted.rmdir()
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    planted.symlink_to(target)
    got = _jit._private_cache_dir()
    assert Path(got) not in (planted, target)
    # a fresh, private folder of the right name is used as is
    planted.unlink()
    assert Path(_jit._private_cache_dir()) == planted


def test_kernels_compiled_for_another_thread_pool_are_not_reused(tmp_path):
    # the parallel kernels freeze NUMBA_NUM_THREADS into their compiled code
    # and numba's cache index ignores it: a cache written with 1 thread used
    # to make every later run split its work for 1 thread (one core busy);
    # each pool size now has its own cache folder
    code = ("from metaeval.stats import _kernels as K; "
            "print(K._POOL, K._n_workers(10), K.kendall_stats.stats.cache_path)")
    src = str(Path(__file__).resolve().parents[1] / "src")
    out = {}
    for threads in ("1", "2", "1"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": threads,
               "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        pool, workers, path = res.stdout.split()
        assert (int(pool), int(workers)) == (int(threads), int(threads))
        out.setdefault(threads, set()).add(path)
    assert all(len(p) == 1 for p in out.values())
    (p1,), (p2,) = out["1"], out["2"]
    assert p1 != p2 and "numba-threads-1" in p1 and "numba-threads-2" in p2
    # numba's setting is restored after the kernels: other packages' caches do not move
    res = subprocess.run([sys.executable, "-c", "import numba.core.config as c; "
                          "from metaeval.stats import _kernels; print(c.CACHE_DIR)"],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path),
                              "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert res.stdout.strip() == str(tmp_path), res.stderr

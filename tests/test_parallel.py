"""The execution layer (metaeval._parallel): worker processes die with their parent.

Issue 18.9: after ``kill -9`` of a ``metaeval ... --jobs 2`` run, its joblib
(loky) workers lived on for up to 34 minutes, each holding a core.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from metaeval import _parallel

SRC = str(Path(__file__).resolve().parents[1] / "src")
PROC = Path("/proc")


def _children(pid):
    """Pids of the live processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for p in PROC.iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, split after ')'
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state not in ("Z", "X"):
            out.append(int(p.name))
    return out


def _alive(pid):
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not (PROC / "self" / "stat").exists(), reason="needs Linux /proc")
def test_workers_exit_when_parent_is_killed(tmp_path):
    """Regression (18.9): workers orphaned by kill -9 of the parent lived on."""
    env = {**os.environ, "PYTHONPATH": SRC}
    cmd = [sys.executable, "-c", "import sys; from metaeval.cli import main; main()",
           "measures", "summeval", "--human", "coherence",
           "--metrics", "ROUGE.1,ROUGE.2,ROUGE.L,BLEU,BertScore_f1,METEOR",
           "--measures", "group-by-system:kendall_b,input:spearman", "--n-resamples", "200000",
           "--splits", "10", "--jobs", "2", "--seed", "0", "--out", str(tmp_path / "run")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    workers = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            kids = _children(proc.pid)
            # loky's workers (and its resource tracker) are the run's children
            if len(kids) >= 2:
                time.sleep(2.0)  # let the workers start their units
                workers = _children(proc.pid)
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert len(workers) >= 2, "the run started no worker processes"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
        assert not left, f"worker processes {left} outlived their killed parent by 10 s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)
        proc.stderr.close()


def test_watchdog_exits_a_process_whose_parent_dies(tmp_path):
    """The polling watchdog on its own (no PR_SET_PDEATHSIG): a grandchild started by a child that is then
    killed exits within a second (its parent pid changes)."""
    code = f"""
import os, sys, time
sys.path.insert(0, {SRC!r})
from metaeval._parallel import _watch_parent
parent = os.getpid()  # not os.getppid() in the child: under load the parent may be gone by then
pid = os.fork()
if pid == 0:
    _watch_parent(parent, interval=0.05, pdeathsig=False)
    time.sleep(60)
    os._exit(3)
print(pid, flush=True)
time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    child = int(proc.stdout.readline())
    try:
        assert _alive(child)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        proc.stdout.close()


def test_watchdog_ignores_a_process_that_is_not_a_direct_child():
    """Dask workers (children of a nanny, not of the caller) are left alone: the caller is a live
    process that is not their parent (here pid 1, which exists and is not pytest's parent)."""
    assert os.getppid() != 1
    assert _parallel._watch_parent(1) is False


def test_worker_orphaned_before_its_watchdog_starts_exits(tmp_path):
    """Regression (seen under load): a worker whose parent was killed while the worker was still
    starting found a different parent pid and took itself for a Dask worker ("not watched"), so
    it lived on. A dead parent pid now means orphan: exit 70."""
    code = f"""
import os, sys, time
sys.path.insert(0, {SRC!r})
from metaeval._parallel import _watch_parent
parent = os.getpid()
pid = os.fork()
if pid == 0:
    while os.getppid() == parent:  # wait until the parent is gone (re-parented)
        time.sleep(0.01)
    _watch_parent(parent, interval=0.05)
    open({str(tmp_path / "survived")!r}, "w").close()  # only if the orphan went on as a non-worker
    os._exit(3)
print(pid, flush=True)
os._exit(0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    child = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)
    assert not (tmp_path / "survived").exists()


def _square(x):
    return x * x


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_run_units_results_in_order(n_jobs):
    # expected: the plain list comprehension
    units = list(range(7))
    assert _parallel.run_units(_square, units, n_jobs=n_jobs) == [u * u for u in units]


def test_run_units_with_workers_equals_in_process():
    """Same numbers with 1 or 2 workers (units draw from named streams)."""
    import metaeval

    ds = metaeval.load_dataset("summeval")
    kw = dict(metrics=["ROUGE.1", "ROUGE.2", "BLEU"], measures=["system:pearson"],
              n_resamples=50, rng=3)
    one = metaeval.discriminative_power(ds, "coherence", **kw)
    two = metaeval.discriminative_power(ds, "coherence", n_jobs=2, **kw)
    np.testing.assert_array_equal(one.pvalues, two.pvalues)


def test_worker_config_keeps_a_backend_the_caller_configured():
    """The watchdog initializer is added only to joblib's default loky
    backend; a backend or loky option set with parallel_config is kept."""
    import contextlib

    from joblib import parallel_config

    assert not isinstance(_parallel._worker_config(), contextlib.nullcontext)
    with parallel_config(backend="threading"):
        assert isinstance(_parallel._worker_config(), contextlib.nullcontext)
    with parallel_config(backend="loky", inner_max_num_threads=1):
        assert isinstance(_parallel._worker_config(), contextlib.nullcontext)
    with parallel_config(backend="loky", idle_worker_timeout=10):
        assert isinstance(_parallel._worker_config(), contextlib.nullcontext)
    # under the threading backend the units still run, in this process
    with parallel_config(backend="threading"):
        assert _parallel.run_units(_square, range(5), n_jobs=2) == [0, 1, 4, 9, 16]

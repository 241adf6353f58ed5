import os, sys, time, json, tempfile
# Compile events (numba.core.event) of one CLI command with a fresh NUMBA_CACHE_DIR; JSON to $OUT.
# usage (JSON to $OUT, default benchmarks/results/startup_compile.json): OUT=prof.json PYTHONPATH=src python benchmarks/startup_compile.py report --quick --out DIR --seed 0
os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="ckpt_cold_")
from numba.core import event
rec = []  # (function, argument types, wall s, CPU s, nesting depth)
# nested compiles: use a stack
class Stack(event.Listener):
    def __init__(self): self.st = []
    def on_start(self, ev): self.st.append((time.perf_counter(), time.process_time()))
    def on_end(self, ev):
        t, c = self.st.pop(); d = ev.data
        rec.append((d["dispatcher"].py_func.__module__ + "." + d["dispatcher"].py_func.__qualname__, str(d["args"]), time.perf_counter() - t, time.process_time() - c, len(self.st)))
event.register("numba:compile", Stack())
from metaeval.cli import main
t = time.perf_counter(); c = time.process_time()
try:
    main(sys.argv[1:])
except SystemExit as e:
    pass
tot = (time.perf_counter() - t, time.process_time() - c)
top = [r for r in rec if r[4] == 0]
out = os.environ.get("OUT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "startup_compile.json"))
os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
print(json.dumps({"total": tot, "compile_top_wall": sum(r[2] for r in top), "compile_top_cpu": sum(r[3] for r in top),
                  "n": len(rec), "records": sorted(rec, key=lambda r: -r[3])}, indent=0), file=open(out, "w"))

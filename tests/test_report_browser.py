"""The report in a real browser: headless Chromium (Debian `chromium`) opens report.html from
disk (file://, no server, no network), the page logs no console error (no script error, no
failed resource such as a missing figure), every figure loads, and a screenshot is saved.

The screenshot goes to the test's tmp_path and is copied to `.pytest-artifacts/report.png` at
the repository root (CI keeps it; the folder is not tracked).  The DevTools protocol is spoken
with the standard library (tests/_chromium.py); nothing is downloaded.  Without a chromium
binary the test skips and says how to install it (CI installs it: .ci/run).
"""

import os
import shutil

import pytest

from _chromium import Browser, file_url, find_chromium
from test_report import rendered_tiny

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it as root")


def test_report_opens_in_chromium_without_console_errors(tmp_path):
    pytest.importorskip("sacrebleu")
    out, doc, _ = rendered_tiny()
    with Browser(width=1280, height=1600) as b:
        b.open(file_url(out / "report.html"))
        errors = b.console_errors()
        n_images = b.evaluate("document.images.length")
        broken = b.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                            ".map(i => i.getAttribute('src'))")
        sections = b.evaluate("Array.from(document.querySelectorAll('section[data-section]'))"
                              ".map(s => s.dataset.section)")
        n_tables = b.evaluate("document.querySelectorAll('table[data-table]').length")
        title = b.evaluate("document.title")
        embedded = b.evaluate("Array.from(document.images).every(i => i.src.startsWith('data:image/png;base64,'))")
        text = b.evaluate("document.body.innerText")
        n_refs = b.evaluate("document.querySelectorAll('ol.references li').length")
        # no figure is wider than its column (nothing cut off at the right edge)
        too_wide = b.evaluate("Array.from(document.images).filter(i => i.getBoundingClientRect().right > "
                              "document.querySelector('main').getBoundingClientRect().right + 1).length")
        # QA pass: the metrics-to-trust table scrolled sideways at 1280 px (headers and long text cells
        # did not wrap); no table is wider than its box now
        scrolling = b.evaluate("Array.from(document.querySelectorAll('table[data-table]')).filter(t => "
                               "t.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.dataset.table)")
        shot = b.screenshot(str(tmp_path / "report.png"))
        shots = []
        for k, anchor in enumerate(["sec-recommendation", "fig-ks", "sec-methods", "sec-references"]):
            b.evaluate(f"document.getElementById('{anchor}').scrollIntoView()")
            shots.append(b.screenshot(str(tmp_path / f"report-{k}.png")))
    assert errors == []
    figures = [f for s in doc["sections"] for f in s["figures"]]
    assert n_images == len(figures) and broken == []
    assert sections[: len(doc["sections"])] == [s["id"] for s in doc["sections"]]
    assert n_tables == sum(len(s["tables"]) for s in doc["sections"])
    assert title == doc["title"]
    assert embedded and too_wide == 0 and n_refs == 5
    assert scrolling == [], scrolling
    for raw in (".. math::", "**", ":math:", "\\frac", "seed paper"):
        assert raw not in text, raw
    assert "How to cite" in text and "@software{metaeval," in text
    for p in shots:
        assert os.path.getsize(p) > 20_000
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 20_000
    keep = os.path.join(ROOT, ".pytest-artifacts")
    os.makedirs(keep, exist_ok=True)
    shutil.copy(shot, os.path.join(keep, "report.png"))


def test_console_errors_are_detected(tmp_path):
    """The check above can fail: a page with a missing image and a script error is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="figures/missing.png">'
                    '<script>console.error("boom"); undefinedFunction();</script></body></html>')
    with Browser(width=400, height=300) as b:
        b.open(file_url(page), settle=0.3)
        errors = b.console_errors()
    assert any("ERR_FILE_NOT_FOUND" in e for e in errors)
    assert any(e.startswith("console.error: boom") for e in errors)
    assert any(e.startswith("exception:") for e in errors)

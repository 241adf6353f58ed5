"""Drive a headless Chromium through the DevTools protocol, with the standard library only.

Used by ``tests/test_report_browser.py`` (console errors, screenshot) and to take the
README's screenshot of the report::

    python tests/_chromium.py report/report.html docs/figures/report.png [WIDTH HEIGHT]

Nothing is downloaded: it starts the system's ``chromium`` (Debian package) with
``--remote-debugging-port=0``, reads the port from ``DevToolsActivePort``, and talks
to the page's websocket (RFC 6455, a minimal client: masked text frames out, text
and continuation frames in).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


class _WebSocket:
    def __init__(self, url, timeout=30):
        assert url.startswith("ws://")
        hostport, _, path = url[5:].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        head, _, self.buf = head.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"websocket handshake failed: {head[:200]!r}")

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text):
        data = text.encode()
        head = bytes([0x81])
        n = len(data)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def recv(self):
        parts = []
        while True:
            b0, b1 = self._read(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if op == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if op in (0x9, 0xA):  # ping/pong: ignore
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Browser:
    """A headless Chromium with one page; collects console errors and exceptions."""

    def __init__(self, binary=None, width=1280, height=1600, timeout=60):
        self.binary = binary or find_chromium()
        if self.binary is None:
            raise FileNotFoundError("no chromium binary (Debian: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="metaeval-chromium-")
        self.proc = subprocess.Popen(
            [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--mute-audio",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             f"--window-size={width},{height}", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        t0 = time.time()
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if self.proc.poll() is not None or time.time() - t0 > timeout:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        targets = []
        while not [t for t in targets if t.get("type") == "page"]:
            if time.time() - t0 > timeout:
                self.close()
                raise RuntimeError("chromium has no page target")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                targets = json.load(r)
            time.sleep(0.05)
        page = [t for t in targets if t.get("type") == "page"][0]
        self.ws = _WebSocket(page["webSocketDebuggerUrl"], timeout=timeout)
        self.timeout = timeout
        self._id = 0
        self.events = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def call(self, method, **params):
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        t0 = time.time()
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)
            if time.time() - t0 > self.timeout:
                raise TimeoutError(method)

    def wait_event(self, name, timeout=None):
        t0 = time.time()
        for e in self.events:
            if e["method"] == name:
                return e
        while time.time() - t0 < (timeout or self.timeout):
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == name:
                    return msg
        raise TimeoutError(name)

    def open(self, url, settle=1.0):
        """Navigate and wait for the load event, then ``settle`` seconds of events."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        self.call("Runtime.evaluate", expression=f"new Promise(r => setTimeout(r, {int(settle * 1000)}))",
                  awaitPromise=True)

    def evaluate(self, expression):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def console_errors(self):
        """Console errors, uncaught exceptions and error log entries (e.g. failed resource loads)."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                                  for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                ent = p["entry"]
                out.append(f"log ({ent.get('source')}): {ent.get('text')} {ent.get('url', '')}")
        return out

    def screenshot(self, path, full_page=False):
        params = {"format": "png"}
        if full_page:
            m = self.call("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m["contentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def file_url(path):
    return "file://" + os.path.abspath(path)


if __name__ == "__main__":  # python tests/_chromium.py REPORT.html OUT.png [WIDTH HEIGHT]
    html, png = sys.argv[1], sys.argv[2]
    w, h = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1280, 1600)
    with Browser(width=w, height=h) as b:
        b.open(file_url(html))
        errors = b.console_errors()
        b.screenshot(png)
    print(f"{png} written; console errors: {errors or 'none'}")
    sys.exit(1 if errors else 0)

"""A real headless Chromium driven over the DevTools protocol (websockets, no selenium).

with Chromium(artifacts) as b:          # SkipTest-style: Chromium.find() is None if absent
    b.goto(url); b.eval("document.title"); b.screenshot("floor.png")
"""

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1400,900",
]


def find():
    for name in (os.environ.get("SHOE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Chromium:
    def __init__(self, binary=None):
        self.binary = binary or find()
        self.proc = None
        self.ws = None
        self._id = 0
        self.profile = None

    def __enter__(self):
        from urllib.request import urlopen

        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="shoe-chromium-")
        self.proc = subprocess.Popen(
            [self.binary, *FLAGS, "--user-data-dir=" + self.profile, "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120  # a loaded machine starts it slowly
        port = None
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError("chromium exited (%s)" % self.proc.returncode)
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port")
        targets = json.load(urlopen("http://127.0.0.1:%d/json/list" % port))
        page = [t for t in targets if t.get("type") == "page"][0]
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=64 << 20)
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    def call(self, method, **params):
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def goto(self, url):
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href === %s" % json.dumps(url))

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("page error: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def wait(self, expr, timeout=120.0):
        deadline = time.monotonic() + timeout
        while True:
            v = self.eval(expr)
            if v:
                return v
            if time.monotonic() > deadline:
                raise AssertionError("page never satisfied: %s" % expr)
            time.sleep(0.05)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def __exit__(self, *exc):
        if self.ws:
            self.ws.close()
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)

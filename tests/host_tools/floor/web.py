"""A small HTTP client for the floor view's tests: one cookie (the session), no redirects
followed, every status returned (never raised).

    w = Web(view.url); w.login("admin", pw); status, headers, body = w.get("api/floor")
    w.json("api/floor"); w.post("logout", csrf=w.me()["csrf"]); for chunk in w.stream("events")
"""

import http.client
import json
import ssl
from urllib.parse import urlencode, urlsplit

from host_tools.floor.view import COOKIE


class Web:
    # a deadline, not a pace: on a loaded machine a view may take many seconds to answer (a login
    # hashes its password); only a view that never answers fails, after two minutes
    def __init__(self, base, cafile=None, timeout=120):
        u = urlsplit(base)
        self.base = base if base.endswith("/") else base + "/"
        self.host, self.port, self.tls = u.hostname, u.port, u.scheme == "https"
        self.ctx = ssl.create_default_context(cafile=cafile) if self.tls else None
        self.timeout = timeout
        self.cookie = None
        self.cookie_attrs = None

    def _conn(self):
        if self.tls:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self.ctx
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def request(self, method, path, body=None, headers=None, keep=False):
        c = self._conn()
        h = dict(headers or {})
        if self.cookie:
            h["Cookie"] = "%s=%s" % (COOKIE, self.cookie)
        c.request(method, "/" + path.lstrip("/"), body=body, headers=h)
        r = c.getresponse()
        for k, v in r.getheaders():
            if k.lower() == "set-cookie" and v.startswith(COOKIE + "="):
                self.cookie_attrs = v
                val = v.split(";", 1)[0].split("=", 1)[1]
                self.cookie = None if "Max-Age=0" in v else val
        if keep:
            return r, c
        data = r.read()
        c.close()
        return r.status, dict(r.getheaders()), data

    def get(self, path, headers=None):
        return self.request("GET", path, headers=headers)

    def json(self, path):
        status, _, body = self.get(path)
        assert status == 200, (path, status, body[:200])
        return json.loads(body)

    def post(self, path, fields=None, csrf=None, headers=None):
        h = {"Content-Type": "application/x-www-form-urlencoded"}
        if csrf is not None:
            h["X-CSRF-Token"] = csrf
        h.update(headers or {})
        return self.request("POST", path, body=urlencode(fields or {}), headers=h)

    def login(self, user, password):
        status, headers, body = self.post("login", {"username": user, "password": password})
        assert status == 303, (status, body[:300])
        return self

    def me(self):
        return self.json("api/me")

    def first_event(self, path="events"):
        """The stream's status and its first message (or the error body)."""
        r, c = self.request("GET", path, keep=True)
        try:
            if r.status != 200:
                return r.status, r.read()
            data = b""
            while b"\n\n" not in data:
                data += r.read1(4096)
            return r.status, data
        finally:
            c.close()

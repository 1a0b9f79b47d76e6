"""The local authority for the Python tests and benchmark: starts
``authority.mjs`` (the production Worker on bare workerd, through
tests/authority/harness.mjs), mints HS256 tokens with its key and calls its
admin API. Standard library only."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
_names = itertools.count(1)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class LocalAuthority:
    """One authority for a test session; ``close()`` stops it (closing the
    helper's stdin)."""

    def __init__(self) -> None:
        node = os.environ.get("RANGEID_NODE", "node")
        self.proc = subprocess.Popen(
            [node, str(HERE / "authority.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            raise RuntimeError(f"the local authority did not start (exit {self.proc.returncode})")
        info = json.loads(line)
        self.url: str = info["url"]
        self.kid: str = info["kid"]
        # The harness signs with the key text itself (HMAC over its UTF-8).
        self.key: bytes = info["key"].encode()
        self.admin = self.token("admin", ["*"])

    def token(self, role: str, ns: list[str], ttl: int = 3600, sub: str = "pytest", key: Optional[bytes] = None) -> str:
        header = _b64(json.dumps({"alg": "HS256", "kid": self.kid, "typ": "JWT"}).encode())
        claims = _b64(json.dumps({"sub": sub, "role": role, "ns": ns, "exp": int(time.time()) + ttl}).encode())
        signed = f"{header}.{claims}".encode()
        sig = _b64(hmac.new(key or self.key, signed, hashlib.sha256).digest())
        return f"{header}.{claims}.{sig}"

    def request(self, method: str, path: str, body: Optional[dict[str, Any]] = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("authorization", f"Bearer {self.admin}")
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def namespace(self, prefix: str, **fields: Any) -> str:
        """Creates a namespace with a fresh name; returns the name."""
        name = f"{prefix}-{os.getpid()}-{next(_names)}"
        status, body = self.request("POST", "/v1/namespaces", {"namespace": name, **fields})
        assert status == 201, body
        return name

    def next_of(self, ns: str) -> int:
        """The namespace's next ID to grant: above every ID granted."""
        status, body = self.request("GET", f"/v1/namespaces/{ns}")
        assert status == 200, body
        return int(body["next"])

    def restart(self) -> None:
        """Stops the authority and starts it again (its state kept)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("restart\n")
        self.proc.stdin.flush()
        assert json.loads(self.proc.stdout.readline()) == {"restarted": True}

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)

"""The FastAPI example of the repo's README.md, as written there, run with
FastAPI's test client against the installed wheel and the local
authority: its lifespan starts the generator, each request gets an ID."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from localauthority import LocalAuthority

README = Path(__file__).resolve().parents[2] / "README.md"


def fastapi_example() -> str:
    text = README.read_text()
    section = text[text.index("## Python: the `rangeid` package"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```", start)]


def test_the_readme_fastapi_example_serves_ids(authority: LocalAuthority, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    ns = authority.namespace("py-readme")
    monkeypatch.setenv("RANGEID_URL", authority.url)
    monkeypatch.setenv("RANGEID_TOKEN", authority.token("generator", [ns]))
    source = fastapi_example().replace('namespace="orders"', f'namespace="{ns}"')
    assert f'namespace="{ns}"' in source
    (tmp_path / "readme_app.py").write_text(source)
    spec = importlib.util.spec_from_file_location("readme_app", tmp_path / "readme_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with TestClient(module.app) as client:
        got = [client.post("/orders") for _ in range(300)]
        assert all(r.status_code == 200 for r in got), got[0].text
        ids = [r.json()["id"] for r in got]
        assert len(set(ids)) == len(ids) and all(i.isdigit() for i in ids)
        assert max(map(int, ids)) < authority.next_of(ns)
    # The lifespan closed it: the route answers 503 with the stable code.
    closed = TestClient(module.app).post("/orders")
    assert closed.status_code == 503 and closed.json()["detail"].startswith("closed: "), closed.text

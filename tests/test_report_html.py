"""``dralint report --format html``: one self-contained page (issue 16, point 8).

The counts asserted below are read off the input in `_repo`: namespace `ml` has one Deployment on the
device plugin, `serve` has one Deployment on DRA (with its ResourceClaimTemplate), and the hostile
namespace has one Pod asking for half a GPU, which `dralint migrate` skips (not a whole number).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from tests.conftest import REPO

HOSTILE = "<script>alert(1)</script>"

LEGACY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  selector: {matchLabels: {app: t}}
  template:
    metadata: {labels: {app: t}}
    spec:
      containers:
        - name: main
          image: x
          resources:
            limits:
              nvidia.com/gpu: 2
"""

HALF = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: half, namespace: "{HOSTILE}"}}
spec:
  containers:
    - name: main
      image: x
      resources:
        limits:
          nvidia.com/gpu: "0.5"
"""


def _repo(root: Path) -> Path:
    (root / "ml").mkdir(parents=True)
    (root / "serve").mkdir()
    (root / "ml" / "train.yaml").write_text(LEGACY, encoding="utf-8")
    (root / "ml" / "half.yaml").write_text(HALF, encoding="utf-8")
    good = (REPO / "rules" / "DRA201-legacy-gpu-extended-resource" / "good.yaml").read_text(encoding="utf-8")
    (root / "serve" / "dra.yaml").write_text(good.replace("namespace: ml", "namespace: serve"), encoding="utf-8")
    return root


class _Tables(HTMLParser):
    """Rows of cell text per section (the h2 text), and every attribute that names a URL."""

    def __init__(self) -> None:
        super().__init__()
        self.section = ""
        self.tables: dict[str, list[list[str]]] = {}
        self.urls: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()
        self._h2: list[str] | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for k, v in attrs:
            if k in ("src", "href", "action", "srcset", "poster", "data", "xlink:href"):
                self.urls.append((tag, k, v or ""))
        if tag == "h2":
            self._h2 = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._h2 is not None:
            self.section = "".join(self._h2).strip()
            self._h2 = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables.setdefault(self.section, []).append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        for buf in (self._h2, self._cell):
            if buf is not None:
                buf.append(data)


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    root = _repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    out = tmp_path / "readiness.html"
    r = CliRunner().invoke(cli, ["report", "--no-cache", "--format", "html", "--output", str(out), "."])
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8"), out


def _parse(text: str) -> _Tables:
    p = _Tables()
    p.feed(text)
    return p


def _row(p: _Tables, section: str, key: str) -> list[str]:
    return next(r for r in p.tables[section] if r and r[0] == key)


def test_page_counts_match_the_input(page: tuple[str, Path]) -> None:
    text, _ = page
    p = _parse(text)
    cols = p.tables["By namespace"][0]
    assert cols[2:6] == ["on DRA", "both", "device plugin", "skipped"]
    assert _row(p, "By namespace", "ml")[2:6] == ["0", "0", "1", "0"]
    assert _row(p, "By namespace", "serve")[2:6] == ["1", "0", "0", "0"]
    assert _row(p, "By namespace", HOSTILE)[2:6] == ["0", "0", "0", "1"]
    assert _row(p, "By namespace", "serve")[-1] == "ready"
    # by directory: ml/ has the legacy Deployment and the skipped Pod
    assert _row(p, "By directory", "ml")[2:6] == ["0", "0", "1", "1"]
    # one of the three GPU workloads is on DRA
    assert "33%" in text
    kinds = p.tables["GPU requests per kind"]
    assert _row(p, "GPU requests per kind", "apps/Deployment")[2:6] == ["2", "2", "1", "1"]
    assert "nvidia.com/gpu × 1" in _row(p, "GPU requests per kind", "Pod")[-1]
    assert len(kinds) == 3  # header, Deployment, Pod
    skips = p.tables["Skipped by dralint migrate (1)"]
    assert skips[1][0] == "ml/half.yaml:2"
    assert HOSTILE in skips[1][1] and "whole number" in skips[1][2]


def test_page_is_self_contained(page: tuple[str, Path]) -> None:
    text, _ = page
    p = _parse(text)
    # no script, stylesheet link, image, frame or font: only <a> may carry a URL, and only to rule docs
    assert not p.tags & {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "base"}
    assert p.urls, "the blockers link to the rule docs"
    for tag, attr, url in p.urls:
        assert (tag, attr) == ("a", "href"), (tag, attr, url)
        assert re.search(r"/docs/rules/DRA\d{3}\.md$", url), url
    assert not re.search(r"url\(|@import|@font-face", text)
    assert "default-src 'none'" in text  # and the page forbids loading anything else
    # both themes
    assert "prefers-color-scheme: dark" in text and "color-scheme" in text


def test_page_escapes_names_from_the_input(page: tuple[str, Path]) -> None:
    text, _ = page
    assert HOSTILE not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script" not in text.lower()


def test_blockers_link_to_the_rule_docs(page: tuple[str, Path]) -> None:
    text, _ = page
    # the hostile namespace is not a valid name: DRA110 is an error finding, so it blocks the move
    m = re.search(r'<a href="([^"]+)"><strong>DRA110</strong>', text)
    assert m is not None
    assert m.group(1).endswith("/docs/rules/DRA110.md")
    assert (REPO / "docs" / "rules" / "DRA110.md").is_file()


# --------------------------------------------------------------------------------------------------
# a real browser

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (Debian: apt-get install chromium)")


def _screenshot(html_file: Path, png: Path, *extra: str) -> list[str]:
    """Render the file headless; return the console messages chromium logged."""
    assert CHROMIUM is not None
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={png.parent / 'chromium-profile'}", "--window-size=1200,1400",
         f"--screenshot={png}", *extra, html_file.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr[-2000:]
    return [ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln]


@needs_chromium
def test_console_check_sees_an_error(tmp_path: Path) -> None:
    # the check below must be able to fail: a page that throws is seen
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><script>throw new Error("marker-42")</script></body></html>',
                   encoding="utf-8")
    console = _screenshot(bad, tmp_path / "bad.png")
    assert any("marker-42" in ln for ln in console), console


@needs_chromium
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_page_renders_in_chromium_without_console_errors(page: tuple[str, Path], theme: str) -> None:
    _, html_file = page
    png = html_file.with_name(f"readiness-{theme}.png")  # kept in pytest's tmp dir as the artifact
    extra = ("--force-dark-mode", "--blink-settings=preferredColorScheme=0") if theme == "dark" else ()
    console = _screenshot(html_file, png, *extra)
    assert console == []
    assert png.stat().st_size > 10_000  # a real picture, not a blank page
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

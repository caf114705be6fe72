"""Shared test helpers: lint text or files in-process, locate the shared corpus."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# the splicer's incremental positions are checked against a whole parse in every test (and in the
# dralint processes tests start): set before dralint is imported
os.environ.setdefault("DRALINT_VERIFY_GRAFTS", "1")

from dralint.engine.config import build_config
from dralint.engine.runner import Result, lint_files
from dralint.inputs.load import load_bytes

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "rules"
EXAMPLES = REPO / "examples"
SHARED = Path(os.environ.get("DRALINT_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus"


def lint_text(text: str | bytes, path: str = "test.yaml", select: Sequence[str] | None = None,
              context: Sequence[tuple[str, str]] = (), **config: Any) -> Result:
    raw = text.encode() if isinstance(text, str) else text
    cfg_raw = dict(config)
    if select is not None:
        cfg_raw["select"] = list(select)
    cfg = build_config(cfg_raw, None, REPO)
    targets = [load_bytes(path, raw)]
    ctx = [load_bytes(p, t.encode()) for p, t in context]
    return lint_files(targets, ctx, cfg)


def codes(result: Result) -> list[str]:
    return [f.rule for f in result.findings]


@pytest.fixture
def lint() -> Callable[..., Result]:
    return lint_text


requires_shared = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


# -- the real pre-commit, with this checkout's hooks -------------------------------------------------

GIT = shutil.which("git")
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
HOOK_IDS = ("dralint", "dralint-fix")


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run([str(GIT), "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                   check=True, capture_output=True, env=env)


@dataclass(frozen=True)
class PreCommit:
    """pre-commit with one store (``PRE_COMMIT_HOME``) for the test session.

    The hook repository is a snapshot of this checkout (committed or not) at ``rev``; pre-commit
    keys its hook environments by repository, rev and additional dependencies, so every run that
    names this repository and rev reuses the environment the session fixture installed once
    (pip, from the package index, exactly as a user's ``pre-commit install-hooks`` would).
    ``try-repo`` is not used: it builds a fresh environment in a store of its own on every call.
    """

    repo: Path
    rev: str
    home: Path

    def config(self, *hooks: str) -> str:
        """A ``.pre-commit-config.yaml`` naming this checkout's hooks, as the README's snippet does."""
        ids = "".join(f"      - id: {h}\n" for h in hooks)
        return f"repos:\n  - repo: {self.repo}\n    rev: {self.rev}\n    hooks:\n{ids}"

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PRE_COMMIT_HOME": str(self.home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1",
               "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        env.pop("VIRTUAL_ENV", None)  # the hook runs in its own environment, not the test's
        env.pop("GITHUB_ACTIONS", None)  # the output is compared as a terminal would show it
        return env

    def run(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PRE_COMMIT, *args], cwd=cwd, capture_output=True, text=True, env=self.env(),
                              timeout=900)


@pytest.fixture(scope="session")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> PreCommit:
    """This checkout's files (tracked and new, minus ignored ones) committed in a throwaway
    repository, and both hooks' environment installed from it into a session store."""
    if GIT is None or not Path(PRE_COMMIT).exists():  # pragma: no cover - the test extra installs pre-commit
        pytest.skip("pre-commit and git are needed (pip install -e '.[test]')")
    dst = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run([GIT, "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "-m", "snapshot")
    rev = subprocess.run([GIT, "rev-parse", "HEAD"], cwd=dst, check=True, capture_output=True,
                         text=True).stdout.strip()
    pc = PreCommit(dst, rev, tmp_path_factory.mktemp("pre-commit-home"))
    config = tmp_path_factory.mktemp("pre-commit-config") / "config.yaml"
    config.write_text(pc.config(*HOOK_IDS), encoding="utf-8")
    p = pc.run(dst, "install-hooks", "--config", str(config))
    assert p.returncode == 0, f"pre-commit could not install the hook environment:\n{p.stdout}{p.stderr}"
    return pc


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home and user cache directory: outside the project, a cache may live only there."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DRALINT_CACHE_DIR", raising=False)
    return tmp_path / "xdg" / "dralint"

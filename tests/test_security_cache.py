"""The summary cache cannot be turned against the machine (SECURITY.md, promise 3).

Every attack here uses only files a pull request could commit: symlinks inside ``.dralint_cache/``
and a ``cache-dir:`` key in the configuration. Each runs the real command in a subprocess with
``HOME`` pointed at a fake home full of canaries, then checks that the home is byte-for-byte the
same and that the lint result is the one a run without the cache gives. The last tests show the
cache still works (a hit on the second run) when nothing hostile is there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dralint.engine.cache import FORMAT
from tests.conftest import REPO

POD = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: train
    image: busybox
    resources:
      claims: [{name: gpu, request: gpu}]
"""

TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
"""

SERVICE = """apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ml}
spec:
  selector: {app: x}
"""

#: the template is found: linting the pod alone (with the repository as context) reports nothing
ONE_FILE = ["check", "apps/pod.yaml", "--context", ".", "--format", "json", "-v"]


def make_home(top: Path) -> Path:
    """A fake home: directories and files that a hostile cache would love to delete or overwrite."""
    h = top / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("FAKE PRIVATE KEY canary\n")
    (h / "projects" / "other").mkdir(parents=True)
    (h / "projects" / "other" / "notes.txt").write_text("canary notes\n")
    (h / ".config" / "tool").mkdir(parents=True)
    (h / ".config" / "tool" / "token").write_text("fake-token-canary\n")
    (h / ".bashrc").write_text("# canary bashrc\nexport PATH=$HOME/bin:$PATH\n")
    # the decoded copy of dralint's data files, which every run keeps in the user's own cache
    # directory (`dralint.knowledge.catalog.decoded_data`): there already, as after a first run, so
    # that what a test sees added or removed can only come from the linted tree's cache
    shutil.copytree(_data_copy(), h / ".cache" / "dralint" / "data")
    return h


@functools.cache
def _data_copy() -> Path:
    top = Path(tempfile.mkdtemp(prefix="dralint-data-copy-"))
    subprocess.run([sys.executable, "-m", "dralint", "rules"], env={**os.environ, "HOME": str(top),
                   "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": ""}, capture_output=True, check=True, timeout=120)
    made = top / ".cache" / "dralint" / "data"
    assert len(list(made.glob("*.json"))) == 1
    return made


def make_repo(top: Path) -> Path:
    root = top / "repo"
    (root / "apps").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "apps" / "pod.yaml").write_text(POD)
    (root / "claims" / "template.yaml").write_text(TEMPLATE)
    (root / "apps" / "service.yaml").write_text(SERVICE)
    old = 1_600_000_000  # older than two seconds, so that paths.json remembers them
    for p in root.rglob("*.yaml"):
        os.utime(p, (old, old))
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def snapshot(top: Path) -> dict[str, str]:
    """Every path below ``top`` with its content, or where its link points (links are not followed)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            elif os.path.isdir(p):
                out[rel] = "<dir>"
            else:
                out[rel] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def dralint(args: list[str], cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "DRALINT_CACHE_DIR")}
    clean.update(HOME=str(home), PYTHONPATH=str(REPO), **env)
    return subprocess.run([sys.executable, "-m", "dralint", *args], cwd=cwd, env=clean, capture_output=True,
                          text=True, timeout=120, check=False)


def outcome(p: subprocess.CompletedProcess[str]) -> tuple[int, list[tuple[str, str]]]:
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, sorted((f["rule"], f["path"]) for f in json.loads(p.stdout)["findings"])


def cache_hits(p: subprocess.CompletedProcess[str]) -> int:
    m = re.search(r"cache_hits (\d+)", p.stderr)
    assert m, p.stderr
    return int(m.group(1))


def entry_of(repo: Path, text: str) -> Path:
    """The cache entry of a YAML file with this content (its key is the hash of the bytes)."""
    key = hashlib.blake2b(text.encode(), digest_size=20, person=b"dralint-yaml").hexdigest()
    found = list((repo / ".dralint_cache").glob(f"v*/*/{key[:2]}/{key}.summary"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def clean_result(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list[tuple[str, str]]]:
    """What a run without any cache reports on the repository (the same files in every test: one run)."""
    top = tmp_path_factory.mktemp("clean")
    result = outcome(dralint([*ONE_FILE, "--no-cache"], make_repo(top), make_home(top)))
    assert result == (0, [])  # the template in claims/ resolves the claim
    return result


# -- attacks: committed symlinks in .dralint_cache -----------------------------------------------

def test_version_dir_linked_to_home_deletes_nothing(repo: Path, home: Path,
                                                    clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    (repo / ".dralint_cache").mkdir()
    (repo / ".dralint_cache" / f"v{FORMAT}").symlink_to(home)
    before = snapshot(home)
    for args in (["check", ".", "--format", "json"], ONE_FILE, [*ONE_FILE, "--jobs", "2"]):
        p = dralint(args, repo, home)
        assert p.returncode in (0, 1), p.stderr
        assert snapshot(home) == before  # nothing removed, nothing added
    assert outcome(dralint(ONE_FILE, repo, home)) == clean_result
    assert "cache off:" in dralint(ONE_FILE, repo, home).stderr  # -v says why it is slower


def test_cache_root_linked_elsewhere_is_not_written_through(repo: Path, home: Path,
                                                            clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    (repo / ".dralint_cache").symlink_to(home / "projects")
    before = snapshot(home)
    assert outcome(dralint(ONE_FILE, repo, home)) == clean_result
    assert snapshot(home) == before


def test_cachedir_tag_linked_to_bashrc_does_not_overwrite_it(repo: Path, home: Path) -> None:
    (repo / ".dralint_cache").mkdir()  # no .gitignore: the old code wrote both marker files again
    (repo / ".dralint_cache" / "CACHEDIR.TAG").symlink_to(home / ".bashrc")
    before = snapshot(home)
    outcome(dralint(ONE_FILE, repo, home))
    assert snapshot(home) == before
    assert (home / ".bashrc").read_text().startswith("# canary bashrc")


def test_dangling_gitignore_link_creates_nothing(repo: Path, home: Path) -> None:
    (repo / ".dralint_cache").mkdir()
    (repo / ".dralint_cache" / ".gitignore").symlink_to(home / ".config" / "autostart.sh")
    before = snapshot(home)
    outcome(dralint(ONE_FILE, repo, home))
    assert not (home / ".config" / "autostart.sh").exists()
    assert snapshot(home) == before


def test_salt_dir_linked_to_home_is_neither_written_nor_emptied(
        repo: Path, home: Path, clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    outcome(dralint(ONE_FILE, repo, home))  # a real cache first, to learn this build's salt directory
    salt_dir = entry_of(repo, TEMPLATE).parent.parent
    shutil.rmtree(salt_dir)
    salt_dir.symlink_to(home / "projects")
    before = snapshot(home)
    for args in (ONE_FILE, ["check", ".", "--format", "json"]):
        p = dralint(args, repo, home)
        assert p.returncode in (0, 1), p.stderr
    assert snapshot(home) == before
    assert outcome(dralint(ONE_FILE, repo, home)) == clean_result


def test_symlinked_entry_is_a_miss_never_read(repo: Path, home: Path,
                                              clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    outcome(dralint(ONE_FILE, repo, home))
    # point the template's entry at a valid entry of another file (the Service, no template in it):
    # read through the link, the pod's template would vanish and the pod would get a finding
    template_entry = entry_of(repo, TEMPLATE)
    decoy = home / "decoy.json"
    decoy.write_bytes(entry_of(repo, SERVICE).read_bytes())
    template_entry.unlink()
    template_entry.symlink_to(decoy)
    before = snapshot(home)
    assert outcome(dralint(ONE_FILE, repo, home)) == clean_result
    assert snapshot(home) == before  # the decoy was not written either


def test_symlinked_paths_index_is_never_read(repo: Path, home: Path,
                                             clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    outcome(dralint(ONE_FILE, repo, home))
    paths_file = entry_of(repo, TEMPLATE).parent.parent / "paths.json"
    index = json.loads(paths_file.read_text())
    template = str((repo / "claims" / "template.yaml").resolve())
    service_key = entry_of(repo, SERVICE).stem
    assert template in index  # remembered by (size, mtime, inode)
    index[template][3] = service_key  # read through the link, the template would be the Service
    decoy = home / "paths.json"
    decoy.write_text(json.dumps(index))
    paths_file.unlink()
    paths_file.symlink_to(decoy)
    before = snapshot(home)
    assert outcome(dralint(ONE_FILE, repo, home)) == clean_result
    assert snapshot(home) == before


def test_stale_salts_are_deleted_only_with_the_marker_and_without_following_links(repo: Path, home: Path) -> None:
    outcome(dralint(ONE_FILE, repo, home))
    first_salt = entry_of(repo, TEMPLATE).parent.parent
    version_dir = first_salt.parent
    marker = ".dralint-salt-dir"
    unmarked = version_dir / "0123456789abcdef"  # e.g. a committed directory: never ours to delete
    unmarked.mkdir()
    (unmarked / "keep.txt").write_text("not dralint's")
    stale = version_dir / "fedcba9876543210"  # another dralint build's: deleted, but not what it links to
    stale.mkdir()
    (stale / marker).write_text("")
    (stale / "home").symlink_to(home)
    (stale / "ab").mkdir()
    (stale / "ab" / "bashrc").symlink_to(home / ".bashrc")
    linked = version_dir / "00000000aaaaaaaa"  # a link to a marked directory is not a real directory
    (home / "projects" / marker).write_text("")
    linked.symlink_to(home / "projects")
    before = snapshot(home)
    # a different input limit is a different salt: this run prepares its own directory
    outcome(dralint([*ONE_FILE, "--max-file-size", "1000000"], repo, home))
    assert (unmarked / "keep.txt").read_text() == "not dralint's"
    assert not os.path.lexists(stale)
    assert linked.is_symlink()
    assert snapshot(home) == before
    # the first run's salt dir carried the marker, so it went too; the new one carries it in turn
    (new_salt,) = set(os.listdir(version_dir)) - {unmarked.name, linked.name}
    assert new_salt != first_salt.name and (version_dir / new_salt / marker).is_file()


# -- attack: the location chosen by a committed configuration file ------------------------------

@pytest.mark.parametrize(("name", "text"), [
    (".dralint.yaml", "cache-dir: {target}\n"),
    ("pyproject.toml", '[tool.dralint]\ncache-dir = "{target}"\n'),
])
def test_cache_dir_in_a_committed_config_is_a_config_error(repo: Path, home: Path, name: str, text: str) -> None:
    target = home / "projects"
    (repo / name).write_text(text.format(target=target))
    before = snapshot(home)
    p = dralint(ONE_FILE, repo, home)
    assert p.returncode == 2, p.stderr
    assert "cache-dir" in p.stderr and "--cache-dir" in p.stderr and "DRALINT_CACHE_DIR" in p.stderr
    assert "Traceback" not in p.stderr
    assert snapshot(home) == before


def test_explicit_location_outside_project_and_user_cache_is_refused(repo: Path, home: Path, tmp_path: Path) -> None:
    for args, env in (
        (["--cache-dir", str(tmp_path / "elsewhere")], {}),
        (["--cache-dir", "."], {}),  # the project root itself would get the cache's `*` .gitignore
        (["--cache-dir", "apps/../.."], {}),
        ([], {"DRALINT_CACHE_DIR": str(home / ".ssh")}),
    ):
        p = dralint([*ONE_FILE, *args], repo, home, **env)
        assert p.returncode == 2, (args, env, p.stderr)
        assert "neither inside the project" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "elsewhere").exists() and not (repo / ".gitignore").exists()
    assert sorted(os.listdir(home / ".ssh")) == ["id_ed25519"]


# -- and when nothing hostile is there, the cache works -------------------------------------------

def test_default_cache_hits_on_the_second_run(repo: Path, home: Path,
                                              clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    first = dralint(ONE_FILE, repo, home)
    assert outcome(first) == clean_result and cache_hits(first) == 0
    second = dralint(ONE_FILE, repo, home)
    assert outcome(second) == clean_result and cache_hits(second) == 2  # the template and the service
    root = repo / ".dralint_cache"
    assert (root / ".gitignore").read_text().strip().endswith("*")
    assert (root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


@pytest.mark.parametrize("how", ["option", "environment", "xdg"])
def test_user_cache_directory_hits_on_the_second_run(repo: Path, home: Path, tmp_path: Path, how: str,
                                                     clean_result: tuple[int, list[tuple[str, str]]]) -> None:
    if how == "xdg":
        user_cache = tmp_path / "xdg" / "dralint"
        args, env = ["--cache-dir", str(user_cache / "repo")], {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    else:
        user_cache = home / ".cache" / "dralint"  # the default user cache directory
        args, env = ((["--cache-dir", str(user_cache / "repo")], {}) if how == "option"
                     else ([], {"DRALINT_CACHE_DIR": str(user_cache / "repo")}))
    assert outcome(dralint([*ONE_FILE, *args], repo, home, **env)) == clean_result
    second = dralint([*ONE_FILE, *args], repo, home, **env)
    assert outcome(second) == clean_result and cache_hits(second) == 2
    assert list((user_cache / "repo").glob("v*/*/*/*.summary"))
    assert not (repo / ".dralint_cache").exists()

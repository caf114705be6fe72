"""Inputs and writes stay inside the roots; YAML errors never quote the file.

Each test is one attack a pull request can mount with committed files only: a symlink from the
repository to ``~/.aws/credentials`` (a fake HOME in tmp_path holds a fake one with a canary), or
to a manifest outside the repository that ``fix``/``migrate`` would rewrite. The canary must appear
in no output (stdout, stderr, JSON, SARIF) and files outside the repository must stay
byte-identical. dralint runs as a subprocess, as CI runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dralint.fix.write import atomic_write

CANARY = "CANARY-5f1e0c9a-do-not-print"
# line 2 is the one a YAML parser stops at (and PyYAML quotes): it holds the canary
CREDENTIALS = f"[default]\naws_secret_access_key = {CANARY}\naws_access_key_id = AKIAFAKE\n"

FIXABLE = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    source: {resourceClaimTemplateName: t}
  containers:
  - name: c
    resources:
      claims: [{name: gpu}]
"""
LEGACY = """apiVersion: v1
kind: Pod
metadata: {name: legacy}
spec:
  containers:
  - name: c
    image: cuda:12
    resources: {limits: {nvidia.com/gpu: 1}}
"""
MIG = LEGACY.replace("nvidia.com/gpu", "nvidia.com/mig-1g.5gb")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp_path/home (HOME, with ~/.aws/credentials), tmp_path/outside (manifests) and tmp_path/repo (cwd)."""
    aws = tmp_path / "home" / ".aws"
    aws.mkdir(parents=True)
    (aws / "credentials").write_text(CREDENTIALS)
    (aws / "config.yaml").write_text(CREDENTIALS)  # a name the directory walk would pick up
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pod.yaml").write_text(FIXABLE)
    (outside / "legacy.yaml").write_text(LEGACY)
    (tmp_path / "repo" / "apps").mkdir(parents=True)
    (tmp_path / "repo" / "apps" / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n")
    return tmp_path


def creds(world: Path) -> Path:
    return world / "home" / ".aws" / "credentials"


def run(world: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(world / "home"), "NO_COLOR": "1"}
    env.pop("DRALINT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "dralint", *args], cwd=world / "repo", env=env,
                          capture_output=True, text=True, timeout=300)


def assert_no_canary(p: subprocess.CompletedProcess[str]) -> None:
    assert CANARY not in p.stdout and CANARY not in p.stderr, (p.stdout[-2000:], p.stderr[-2000:])
    assert "aws_secret_access_key" not in p.stdout + p.stderr and "AKIAFAKE" not in p.stdout + p.stderr


def outside_bytes(world: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(world.rglob("*")) if p.is_file() and not p.is_symlink()
            and "repo" not in p.relative_to(world).parts}


# -- inputs: manifests -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_manifest_linked_to_credentials_is_reported_not_read(world: Path, fmt: str) -> None:
    (world / "repo" / "apps" / "a.yaml").symlink_to(creds(world))
    p = run(world, "check", ".", "--no-cache", "--format", fmt)
    assert_no_canary(p)
    assert p.returncode == 0, p.stderr  # an info finding: the run does not fail for it
    if fmt in ("text", "github"):
        assert "DRA007" in p.stdout and "DRA001" not in p.stdout
    if fmt == "json":
        found = json.loads(p.stdout)["findings"]
        assert [(f["rule"], f["severity"], f["path"]) for f in found] == [("DRA007", "info", "apps/a.yaml")]
    if fmt == "sarif":
        results = json.loads(p.stdout)["runs"][0]["results"]
        assert [r["ruleId"] for r in results] == ["DRA007"]


def test_manifest_link_named_explicitly_is_not_read(world: Path) -> None:
    # a pre-commit hook or a CI job passes the changed files by name: one can be a committed link
    (world / "repo" / "a.yaml").symlink_to(creds(world))
    p = run(world, "check", "a.yaml", "--no-cache", "--format", "json")
    assert_no_canary(p)
    assert [f["rule"] for f in json.loads(p.stdout)["findings"]] == ["DRA007"]


def test_linked_directory_out_of_the_repository_is_reported_not_entered(world: Path) -> None:
    (world / "repo" / "aws").symlink_to(world / "home" / ".aws")
    for args in (["."], ["aws"], ["aws/config.yaml"]):
        p = run(world, "check", *args, "--no-cache", "--format", "json")
        assert_no_canary(p)
        assert [f["rule"] for f in json.loads(p.stdout)["findings"]] == ["DRA007"], args


def test_context_link_to_credentials_is_not_read(world: Path) -> None:
    (world / "repo" / "apps" / "a.yaml").symlink_to(creds(world))
    p = run(world, "check", "apps/ok.yaml", "--context", ".", "--no-cache", "--format", "json")
    assert_no_canary(p)
    assert p.returncode == 0


def test_follow_symlinks_reads_a_link_out_when_asked(world: Path) -> None:
    (world / "repo" / "a.yaml").symlink_to(world / "outside" / "legacy.yaml")
    p = run(world, "check", ".", "--no-cache", "--format", "json", "--follow-symlinks")
    assert "DRA201" in [f["rule"] for f in json.loads(p.stdout)["findings"]]


# -- inputs: configuration, values, inventory, charts, kustomizations ------------------------------


def assert_refused(p: subprocess.CompletedProcess[str], link: str) -> None:
    assert_no_canary(p)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert link in p.stderr and "points outside" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("name", [".dralint.yaml", "pyproject.toml"])
def test_config_file_linked_out_is_an_error(world: Path, name: str) -> None:
    (world / "repo" / name).symlink_to(creds(world))
    for cmd in ("check", "fix", "migrate", "report"):
        assert_refused(run(world, cmd, "apps", "--no-cache"), name)


def test_explicit_config_linked_out_is_an_error(world: Path) -> None:
    (world / "repo" / "ci.yaml").symlink_to(creds(world))
    assert_refused(run(world, "check", "apps", "--config", "ci.yaml", "--no-cache"), "ci.yaml")


def test_values_file_linked_out_is_an_error(world: Path) -> None:
    chart = world / "repo" / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (world / "repo" / "values.yaml").symlink_to(creds(world))
    assert_refused(run(world, "check", "--helm-chart", "chart", "-f", "values.yaml", "--no-cache"), "values.yaml")


@pytest.mark.parametrize("where", ["file", "directory"])
def test_inventory_linked_out_is_an_error(world: Path, where: str) -> None:
    inv = world / "repo" / "inventory"
    inv.mkdir()
    if where == "file":
        (world / "repo" / "slices.yaml").symlink_to(creds(world))
        arg, link = "slices.yaml", "slices.yaml"
    else:
        (inv / "slices.yaml").symlink_to(creds(world))
        arg, link = "inventory", "inventory/slices.yaml"
    assert_refused(run(world, "check", "apps", "--inventory", arg, "--no-cache"), link)
    (world / "repo" / ".dralint.yaml").write_text(f"inventory: {arg}\n")
    assert_refused(run(world, "check", "apps", "--no-cache"), link)


def test_chart_yaml_linked_out_is_an_error(world: Path) -> None:
    chart = world / "repo" / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").symlink_to(creds(world))
    assert_refused(run(world, "check", "--helm-chart", "chart", "--no-cache"), "chart/Chart.yaml")


def test_kustomization_linked_out_is_an_error(world: Path) -> None:
    kz = world / "repo" / "kz"
    kz.mkdir()
    (kz / "kustomization.yaml").symlink_to(creds(world))
    assert_refused(run(world, "check", "kz", "--no-cache"), "kz/kustomization.yaml")


def test_device_class_map_linked_out_is_an_error(world: Path) -> None:
    (world / "repo" / "classes.yaml").symlink_to(creds(world))
    assert_refused(run(world, "migrate", "apps", "--device-class-map", "classes.yaml", "--no-cache"), "classes.yaml")


# -- writes --------------------------------------------------------------------------------------


def test_fix_never_writes_through_a_link_out(world: Path) -> None:
    (world / "repo" / "a.yaml").symlink_to(world / "outside" / "pod.yaml")
    (world / "repo" / "linked").symlink_to(world / "outside")
    before = outside_bytes(world)
    p = run(world, "fix", ".", "--no-cache", "--unsafe-fixes")
    assert p.returncode in (0, 1), p.stderr
    assert outside_bytes(world) == before
    # asked to follow: the files are read and fixed in memory, but a write out of the roots is refused
    p = run(world, "fix", ".", "--no-cache", "--unsafe-fixes", "--follow-symlinks")
    assert p.returncode == 2 and "cannot write a.yaml" in p.stderr and "outside" in p.stderr, p.stderr
    assert outside_bytes(world) == before
    p = run(world, "fix", "linked", "--no-cache", "--unsafe-fixes", "--follow-symlinks")
    assert p.returncode == 2 and "cannot write linked/pod.yaml" in p.stderr, p.stderr
    assert outside_bytes(world) == before
    assert (world / "repo" / "a.yaml").is_symlink() and (world / "repo" / "linked").is_symlink()


def test_fix_writes_a_link_inside_the_repository_at_its_target(world: Path) -> None:
    real = world / "repo" / "apps" / "real.yaml"
    real.write_text(FIXABLE)
    (world / "repo" / "alias.yaml").symlink_to(real)
    p = run(world, "fix", "alias.yaml", "--no-cache", "--unsafe-fixes")
    assert p.returncode in (0, 1), p.stderr
    assert "source:" not in real.read_text() and (world / "repo" / "alias.yaml").is_symlink()


def test_fix_writes_a_file_named_outside_the_working_directory(world: Path) -> None:
    # no link on the way: the user named that file, as `dralint fix /elsewhere/x.yaml` has always allowed
    p = run(world, "fix", str(world / "outside" / "pod.yaml"), "--no-cache", "--isolated")
    assert p.returncode in (0, 1), p.stderr
    assert "source:" not in (world / "outside" / "pod.yaml").read_text()


def test_migrate_never_writes_through_a_link_out(world: Path) -> None:
    (world / "repo" / "legacy.yaml").symlink_to(world / "outside" / "legacy.yaml")
    before = outside_bytes(world)
    p = run(world, "migrate", ".", "--no-cache")
    assert p.returncode in (0, 1), p.stderr
    assert outside_bytes(world) == before
    p = run(world, "migrate", ".", "--no-cache", "--follow-symlinks")
    assert p.returncode == 2 and "cannot write legacy.yaml" in p.stderr, p.stderr
    assert outside_bytes(world) == before and (world / "repo" / "legacy.yaml").is_symlink()


def test_migrate_bridge_file_linked_out_is_neither_read_nor_written(world: Path) -> None:
    (world / "repo" / "apps" / "mig.yaml").write_text(MIG)
    (world / "repo" / "dra-extended-resources.yaml").symlink_to(creds(world))
    before = outside_bytes(world)
    for extra in (["--diff"], []):
        p = run(world, "migrate", "apps", "--extended-resource-bridge", "--no-cache", *extra)
        assert_no_canary(p)
        assert "points outside" in p.stdout + p.stderr
        assert outside_bytes(world) == before


def test_atomic_write_refuses_a_link_swapped_in_before_the_rename(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"outside\n")
    target = tmp_path / "repo" / "a.yaml"
    target.parent.mkdir()
    target.write_bytes(b"old\n")
    real_fsync = os.fsync

    def swap(fd: int) -> None:  # the moment between writing the temp file and renaming it
        real_fsync(fd)
        target.unlink()
        target.symlink_to(victim)

    from dralint.fix.write import WriteRefused
    from dralint.inputs.roots import Roots

    monkeypatch.setattr(os, "fsync", swap)
    with pytest.raises(WriteRefused):
        atomic_write(target, b"new\n", Roots.of([tmp_path / "repo"]))
    assert victim.read_bytes() == b"outside\n"
    assert target.is_symlink()
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.yaml"]  # the temp file is gone


def test_atomic_write_refuses_a_path_outside_the_roots(tmp_path: Path) -> None:
    from dralint.fix.write import WriteRefused
    from dralint.inputs.roots import Roots

    (tmp_path / "repo").mkdir()
    (tmp_path / "outside").mkdir()
    victim = tmp_path / "outside" / "a.yaml"
    victim.write_bytes(b"outside\n")
    (tmp_path / "repo" / "dir").symlink_to(tmp_path / "outside")
    with pytest.raises(WriteRefused, match="outside"):
        atomic_write(tmp_path / "repo" / "dir" / "a.yaml", b"new\n", Roots.of([tmp_path / "repo"]))
    assert victim.read_bytes() == b"outside\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["a.yaml"]


# -- YAML errors carry no file text ------------------------------------------------------------------


@pytest.mark.parametrize("which", ["config", "--config file", "values", "Chart.yaml",
                                   "kustomization", "device-class-map"])
def test_yaml_errors_quote_no_file_text(world: Path, which: str) -> None:
    """A real file in the repository whose second line (the one PyYAML quotes) holds the canary."""
    repo = world / "repo"
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    if which == "config":
        (repo / ".dralint.yaml").write_text(CREDENTIALS)
        p = run(world, "check", "apps", "--no-cache")
    elif which == "--config file":
        (repo / "ci.yaml").write_text(CREDENTIALS)
        p = run(world, "check", "apps", "--config", "ci.yaml", "--no-cache")
    elif which == "values":
        (repo / "values.yaml").write_text(CREDENTIALS)
        p = run(world, "check", "--helm-chart", "chart", "-f", "values.yaml", "--no-cache")
    elif which == "Chart.yaml":
        (chart / "Chart.yaml").write_text(CREDENTIALS)
        p = run(world, "check", "--helm-chart", "chart", "--no-cache")
    elif which == "kustomization":
        (repo / "kz").mkdir()
        (repo / "kz" / "kustomization.yaml").write_text(CREDENTIALS)
        p = run(world, "check", "kz", "--no-cache")
    else:
        (repo / "classes.yaml").write_text(CREDENTIALS)
        p = run(world, "migrate", "apps", "--device-class-map", "classes.yaml", "--no-cache")
    assert_no_canary(p)
    if which == "values" and "no Helm available" in p.stderr:
        pytest.skip("no Helm engine: the values file is not parsed")
    assert p.returncode == 2, p.stderr
    assert "line 2, column 1" in p.stderr, p.stderr  # the problem and where it is
    assert "Traceback" not in p.stderr


SIDE_FILES = ["config", "--config file", "pyproject", "values", "Chart.yaml", "kustomization", "device-class-map"]
#: nested further than PyYAML's recursive safe loader can follow
DEEP = "k: " + "[" * 3000 + "]" * 3000 + "\n"


@pytest.mark.parametrize("hostile", ["deep", "huge"])
@pytest.mark.parametrize("which", SIDE_FILES)
def test_side_files_too_deep_or_too_big_are_clear_errors(world: Path, which: str, hostile: str) -> None:
    """A side file (read whole, with PyYAML) nested past the loader's stack or over the file size limit
    ends in exit 2 and a message naming the file: never an internal error, never read past the limit."""
    repo = world / "repo"
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    text = DEEP if hostile == "deep" else "#" * (16 * 1024 * 1024 + 1)
    if which == "pyproject" and hostile == "deep":
        text = "[tool.dralint]\n" + DEEP.replace("k: ", "k = ")
    name, args = {
        "config": (".dralint.yaml", ["check", "apps"]),
        "--config file": ("ci.yaml", ["check", "apps", "--config", "ci.yaml"]),
        "pyproject": ("pyproject.toml", ["check", "apps", "--config", "pyproject.toml"]),
        "values": ("values.yaml", ["check", "--helm-chart", "chart", "-f", "values.yaml"]),
        "Chart.yaml": ("chart/Chart.yaml", ["check", "--helm-chart", "chart"]),
        "kustomization": ("kz/kustomization.yaml", ["check", "kz"]),
        "device-class-map": ("classes.yaml", ["migrate", "apps", "--device-class-map", "classes.yaml"]),
    }[which]
    (repo / name).parent.mkdir(exist_ok=True)
    (repo / name).write_text(text)
    p = run(world, *args, "--no-cache")
    if which == "values" and "no Helm available" in p.stderr:
        pytest.skip("no Helm engine: the values file is not parsed")
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert Path(name).name in p.stderr, p.stderr[-2000:]
    if which == "pyproject":  # found rather than named: a pyproject.toml dralint cannot read is not its config
        found = run(world, "check", "apps", "--no-cache")
        assert found.returncode == 0 and "internal error" not in found.stderr, found.stderr[-2000:]


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_manifest_syntax_error_quotes_no_file_text(world: Path, fmt: str) -> None:
    (world / "repo" / "apps" / "bad.yaml").write_text(CREDENTIALS)
    p = run(world, "check", "apps", "--no-cache", "--format", fmt)
    assert_no_canary(p)
    assert p.returncode == 1 and "DRA001" in p.stdout


def test_yaml_error_text_keeps_problem_context_and_position() -> None:
    from dralint.inputs.load import yaml_error_text

    # the pure-Python loader (what yaml.safe_load uses) appends the offending line and a caret
    with pytest.raises(yaml.YAMLError) as err:
        yaml.safe_load(f"key: {{a: 1 b: {CANARY}}}\n")
    assert CANARY in str(err.value)
    text = yaml_error_text(err.value)
    assert CANARY not in text
    assert text == ("while parsing a flow mapping at line 1, column 6: "
                    "expected ',' or '}', but got ':' at line 1, column 13")
    with pytest.raises(yaml.YAMLError) as err:
        yaml.safe_load(f"a: *{CANARY}\n")  # names copied from the text are dropped too
    assert yaml_error_text(err.value) == "found undefined alias '…' at line 1, column 4"


def test_kustomization_reads_are_bounded_and_never_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the render and the patch attribution read of a kustomization after the offline check: a
    file that grew past the bound, or nests too deeply, is no kustomization (kustomize reports it)."""
    from dralint.inputs import kustomize_patches
    from dralint.inputs.render import kustomization_dirs

    top = tmp_path / "kz"
    (top / "base").mkdir(parents=True)
    (top / "base" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (top / "kustomization.yaml").write_text("Resources: [base]\n")
    found = kustomize_patches.read_kustomization(top)
    assert found is not None and found[1] == {"resources": ["base"]}  # keys case-folded, as kustomize reads them
    assert kustomization_dirs(top) == [top.resolve(), (top / "base").resolve()]
    monkeypatch.setattr(kustomize_patches, "PATCH_MAX_BYTES", 16)
    assert kustomize_patches.read_kustomization(top) is None  # 18 bytes: over the bound, not cut and parsed
    monkeypatch.undo()
    (top / "kustomization.yaml").write_text(DEEP)
    assert kustomize_patches.read_kustomization(top) is None
    assert kustomization_dirs(top) == [top.resolve()]
    assert kustomize_patches.applied_in_tree(top) == []
    annotated = {"metadata": {"annotations": {kustomize_patches.TRANSFORMATIONS_ANNOTATION: DEEP}}}
    assert kustomize_patches.applied_from_annotation(annotated, lambda p: None) is None


def test_a_rendered_origin_is_read_only_inside_its_chart(world: Path) -> None:
    """A ``# Source:`` line (text a template can print) or an origin annotation names a file: it is
    read to move positions only when neither ``..`` nor a link takes it out of the chart."""
    from dralint.inputs.render import _own_file, _template_file

    chart = world / "repo" / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "templates" / "pod.yaml").write_text(LEGACY)
    (chart / "h").symlink_to(world / "home")
    (chart / "templates" / "inner.yaml").symlink_to(chart / "templates" / "pod.yaml")
    assert _own_file(chart, _template_file(chart, "chart/templates/pod.yaml"))
    assert _own_file(chart, _template_file(chart, "chart/templates/inner.yaml"))  # a link that stays inside
    assert not _own_file(chart, _template_file(chart, "chart/h/.aws/credentials"))
    assert not _own_file(chart, _template_file(chart, "chart/../../home/.aws/credentials"))
    assert not _own_file(chart, _template_file(chart, "chart/templates"))  # not a regular file
    assert (world / "home" / ".aws" / "credentials").is_file()  # the ones refused are real files


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_read_side_file_reads_only_a_regular_file_and_only_to_its_limit(tmp_path: Path) -> None:
    import errno

    from dralint.inputs.load import read_side_file

    (tmp_path / "a.yaml").write_bytes(b"k: v\n")
    assert read_side_file(tmp_path / "a.yaml", 5) == b"k: v\n"
    with pytest.raises(OSError) as big:
        read_side_file(tmp_path / "a.yaml", 4)
    assert big.value.errno == errno.EFBIG
    os.mkfifo(tmp_path / "fifo.yaml")  # no writer: an open that waited for one would hang the test
    with pytest.raises(OSError) as fifo:
        read_side_file(tmp_path / "fifo.yaml")
    assert fifo.value.errno == errno.EINVAL
    with pytest.raises(OSError):
        read_side_file(tmp_path)  # a directory


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_side_yaml_nesting_is_a_yaml_error_with_either_loader(monkeypatch: pytest.MonkeyPatch, loader: str) -> None:
    """libyaml stops at 1,000 levels itself; PyYAML's pure-Python loader (where PyYAML was built
    without libyaml) recurses until Python's stack ends, which `side_yaml` turns into `TooDeep`."""
    from dralint.inputs import load

    if not hasattr(yaml, loader):
        pytest.skip(f"PyYAML has no {loader} here")
    monkeypatch.setattr(load, "_SIDE_LOADER", getattr(yaml, loader))
    with pytest.raises(yaml.YAMLError) as err:
        load.side_yaml(DEEP)
    assert "nest" in load.yaml_error_text(err.value)
    assert load.side_yaml("k: [[1]]\n") == {"k": [[1]]}

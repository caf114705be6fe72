"""Configuration as ruff finds and checks it (issue 16, point 2): the nearest configuration from the
linted paths upward, ``--config``/``--isolated``, the cache at the project root, gitignore-style
``exclude`` and ``.gitignore`` files, and configuration errors that name the file and the key.
Each test runs the CLI (`dralint.cli.app.main`, the console script's body) from a working directory
chosen to tell the behaviours apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from dralint.cli.app import main

#: a container asking the device plugin for a GPU: one DRA201 warning, so exit 1 unless configured away
LEGACY = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: train
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1
"""
IGNORE_201 = "ignore: [DRA201]\n"


def _tree(base: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")
    return base


@pytest.fixture()
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An unrelated working directory next to the project."""
    d = tmp_path / "elsewhere"
    d.mkdir()
    monkeypatch.chdir(d)
    return d


# ----------------------------------------------------------------------------------------------
# discovery


def test_the_config_is_found_from_the_linted_path_not_the_cwd(tmp_path: Path, elsewhere: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": IGNORE_201, "apps/pod.yaml": LEGACY})
    assert main(["check", str(proj / "apps" / "pod.yaml")]) == 0
    assert main(["check", str(proj)]) == 0
    assert "DRA201" not in capsys.readouterr().out
    # the same file with no configuration around it: the warning is there
    lone = _tree(tmp_path / "lone", {"pod.yaml": LEGACY})
    assert main(["check", str(lone / "pod.yaml")]) == 1


def test_a_subdirectory_config_is_used_for_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    proj = _tree(tmp_path / "proj", {"a/.dralint.yaml": IGNORE_201, "a/x.yaml": LEGACY, "b/y.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "a/x.yaml"]) == 0
    assert main(["check", "b/y.yaml"]) == 1
    assert "b/y.yaml:10:9: DRA201" in capsys.readouterr().out


def test_pyproject_tool_table_is_found_upward(tmp_path: Path, elsewhere: Path) -> None:
    proj = _tree(tmp_path / "proj", {"pyproject.toml": '[tool.dralint]\nignore = ["DRA201"]\n',
                                     "deep/er/pod.yaml": LEGACY})
    assert main(["check", str(proj / "deep" / "er")]) == 0


def test_config_option_and_isolated(tmp_path: Path, elsewhere: Path) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": "select: [DRA3]\n", "pod.yaml": LEGACY})
    other = _tree(tmp_path / "cfg", {"strict.yaml": IGNORE_201})
    # the discovered one selects only DRA3: nothing to say about a GPU request
    assert main(["check", str(proj)]) == 0
    # --isolated: no configuration at all, the default rules
    assert main(["check", "--isolated", str(proj)]) == 1
    # --config: that file instead of the discovered one
    assert main(["check", "--config", str(other / "strict.yaml"), str(proj)]) == 0
    assert main(["check", "--config", str(other / "missing.yaml"), str(proj)]) == 2


# ----------------------------------------------------------------------------------------------
# the cache


def test_the_cache_lives_next_to_the_config_not_in_the_cwd(tmp_path: Path, elsewhere: Path) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": "fail-on: never\n", "apps/pod.yaml": LEGACY,
                                     "claims/c.yaml": LEGACY.replace("trainer", "other")})
    assert main(["check", "--context", str(proj), str(proj / "apps" / "pod.yaml")]) == 0
    assert (proj / ".dralint_cache").is_dir()
    assert not (elsewhere / ".dralint_cache").exists()


def test_without_a_config_the_cache_lives_at_the_git_root(tmp_path: Path, elsewhere: Path) -> None:
    proj = _tree(tmp_path / "proj", {"apps/pod.yaml": LEGACY, "claims/c.yaml": LEGACY.replace("trainer", "o")})
    (proj / ".git").mkdir()
    assert main(["check", "--exit-zero", "--context", str(proj), str(proj / "apps" / "pod.yaml")]) == 0
    assert (proj / ".dralint_cache").is_dir()
    assert not (elsewhere / ".dralint_cache").exists()
    assert not (proj / "apps" / ".dralint_cache").exists()


# ----------------------------------------------------------------------------------------------
# exclude patterns and .gitignore


@pytest.mark.parametrize("pattern", ["**/ignored/**", "./ignored", "ignored/", "ignored", "/ignored/"])
def test_exclude_takes_gitignore_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], pattern: str) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": f"exclude: [{pattern!r}]\n",
                                     "ignored/pod.yaml": LEGACY, "kept/pod.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "."]) == 1
    out = capsys.readouterr().out
    assert "kept/pod.yaml:10:9: DRA201" in out
    assert "ignored/pod.yaml" not in out


def test_extend_exclude_and_a_file_glob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": "exclude: ['vendor/']\nextend-exclude: ['*.tmpl.yaml']\n",
                                     "vendor/a.yaml": LEGACY, "apps/b.tmpl.yaml": LEGACY, "apps/c.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "."]) == 1
    out = capsys.readouterr().out
    assert "apps/c.yaml:10:9" in out and "vendor/" not in out and "b.tmpl.yaml" not in out


def test_gitignore_is_honoured_and_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    proj = _tree(tmp_path / "proj", {".gitignore": "build/\n", "apps/.gitignore": "*.local.yaml\n",
                                     "build/out.yaml": LEGACY, "apps/dev.local.yaml": LEGACY, "apps/pod.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "."]) == 1
    out = capsys.readouterr().out
    assert "apps/pod.yaml:10:9" in out and "build/out.yaml" not in out and "dev.local.yaml" not in out
    # a subdirectory walked on its own still sees the .gitignore above it
    assert main(["check", "build"]) == 0
    capsys.readouterr()
    (proj / ".dralint.yaml").write_text("respect-gitignore: false\n", encoding="utf-8")
    assert main(["check", "."]) == 1
    out = capsys.readouterr().out
    assert "build/out.yaml:10:9" in out and "apps/dev.local.yaml:10:9" in out


# ----------------------------------------------------------------------------------------------
# configuration errors: the file, the key, a hint


def _config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                  name: str, text: str) -> str:
    proj = _tree(tmp_path / "proj", {name: text, "pod.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "pod.yaml"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert str(proj / name) in err
    return err


def test_an_unknown_key_names_the_file_the_key_and_a_suggestion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, ".dralint.yaml", "selct: [DRA2]\n")
    assert "unknown configuration key 'selct'" in err and "did you mean 'select'?" in err


def test_an_unknown_key_in_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, "pyproject.toml", '[tool.dralint]\nextend-exclud = ["x"]\n')
    assert "'extend-exclud'" in err and "did you mean 'extend-exclude'?" in err


def test_an_unknown_key_in_a_driver_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, ".dralint.yaml",
                        "drivers:\n  - name: gpu.nvidia.com\n    verison: '0.4.1'\n")
    assert "'drivers.0.verison'" in err and "did you mean 'version'?" in err


def test_an_unquoted_kubernetes_version_gets_a_quoting_hint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, ".dralint.yaml", "kubernetes-version: 1.30\n")
    assert 'quote it: kubernetes-version: "1.30"' in err


def test_a_quoted_or_unambiguous_version_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": "kubernetes-version: 1.34\nfail-on: never\n",
                                     "pod.yaml": LEGACY})
    monkeypatch.chdir(proj)
    assert main(["check", "pod.yaml"]) == 0


@pytest.mark.parametrize("text", ["per-file-ignores:\n  'legacy/**': [DRA2O1]\n", "severity:\n  DRA2011: error\n"])
def test_codes_in_per_file_ignores_and_severity_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, ".dralint.yaml", text)
    bad = "DRA2O1" if "O" in text else "DRA2011"
    assert bad in err and "did you mean 'DRA201'?" in err


def test_invalid_yaml_in_the_config_names_the_config_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    err = _config_error(tmp_path, monkeypatch, capsys, ".dralint.yaml", "select: [DRA2\nignore: x\n")
    assert "invalid YAML" in err


def test_a_file_name_that_is_not_utf8_meets_the_exclude_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    proj = _tree(tmp_path / "proj", {".dralint.yaml": "exclude: ['skip/']\n", ".gitignore": "*.local.yaml\n"})
    (proj / "caf\udce9.yaml").write_text(LEGACY, encoding="utf-8")  # the bytes `caf\xe9.yaml`
    monkeypatch.chdir(proj)
    assert main(["check", "."]) == 1
    assert ":10:9: DRA201" in capsys.readouterr().out

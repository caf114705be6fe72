"""Output options (issue 16, point 4): -q/--quiet, --silent, --statistics alone, --output-format full,
the summary wording, the --unsafe-fixes hint only when it is true, TERM=dumb / NO_COLOR, the progress
bar, and several report files from one run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dralint.cli.app import main
from dralint.cli.options import use_color
from dralint.engine import progress
from dralint.report.progress import Bar, eta_text

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: main
      image: x
      resources:
        limits:
          nvidia.com/gpu: 1
"""
CLEAN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: {}\n"
QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-budget
  namespace: ml
spec:
  hard:
    requests.nvidia.com/gpu: "8"
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    (tmp_path / "a.yaml").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(CLEAN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", "--isolated", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_says_how_many_of_the_files_have_findings(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ".")
    assert code == 1
    assert out.splitlines()[-1] == "Found 1 finding (1 warning) in 1 of 3 files."


def test_quiet_prints_findings_only(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-q", ".")
    assert code == 1
    assert out.splitlines() == [x for x in out.splitlines() if x.startswith("pod.yaml:11:11: DRA201")]
    assert len(out.splitlines()) == 1


def test_silent_prints_nothing_and_keeps_the_exit_code(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--silent", ".")
    assert (code, out, err) == (1, "", "")
    assert run(capsys, "--silent", "a.yaml") == (0, "", "")


def test_statistics_prints_only_the_table(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pod2.yaml").write_text(GPU_POD.replace("trainer", "other"), encoding="utf-8")
    code, out, _ = run(capsys, "--statistics", ".")
    assert code == 1
    rows = out.splitlines()
    assert len(rows) == 1 and rows[0].split() == ["2", "DRA201", "legacy-gpu-extended-resource"]


def test_full_format_quotes_the_line_with_a_caret_and_the_fix(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "quota.yaml").write_text(QUOTA, encoding="utf-8")
    code, out, _ = run(capsys, "--output-format", "full", "quota.yaml")
    assert code == 1
    lines = out.splitlines()
    head = lines.index(next(x for x in lines if x.startswith("quota.yaml:8:5: DRA205")))
    source = '    requests.nvidia.com/gpu: "8"'
    assert lines[head + 2] == f"8 | {source}"
    caret = lines[head + 3]
    assert caret.startswith("  | ")
    # the caret sits under the key (column 5) and spans it
    assert caret[4:].index("^") == 4 and caret[4:].strip() == "^" * len("requests.nvidia.com/gpu")
    fix_line = lines[head + 4]
    assert fix_line.startswith("  = fix (unsafe): ") and "deviceclass.resource.k8s.io/devices" in fix_line


def test_unsafe_fix_hint_is_shown_when_an_unsafe_fix_applies(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "quota.yaml").write_text(QUOTA, encoding="utf-8")
    _, out, _ = run(capsys, "quota.yaml")
    assert "1 more fixable with `dralint fix --unsafe-fixes`." in out


def test_no_unsafe_fix_hint_for_helm_rendered_documents(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Helm output is never rewritten, so `--unsafe-fixes` would fix nothing here
    (repo / "quota.yaml").write_text("---\n# Source: budget/templates/quota.yaml\n" + QUOTA, encoding="utf-8")
    _, out, _ = run(capsys, "quota.yaml")
    assert "DRA205" in out
    assert "fixable" not in out


def test_no_unsafe_fix_hint_after_an_unsafe_fix_run(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "quota.yaml").write_text(QUOTA, encoding="utf-8")
    capsys.readouterr()
    main(["fix", "--isolated", "--no-cache", "--unsafe-fixes", "--diff", "quota.yaml"])
    out, err = capsys.readouterr()
    assert "--unsafe-fixes`." not in out + err


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_term_dumb_disables_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert use_color("auto", _Tty()) is True
    monkeypatch.setenv("TERM", "dumb")
    assert use_color("auto", _Tty()) is False
    assert use_color("always", _Tty()) is True  # an explicit request still wins


def test_no_color_disables_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", _Tty()) is False


def test_several_outputs_from_one_run(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = repo / "step-summary.md"
    code, out, _ = run(capsys, "--output-format", "github", "--output-file", "sarif=out.sarif",
                       "--output-file", f"markdown={summary}", ".")
    assert code == 1
    assert out.startswith("::warning file=pod.yaml,line=11,col=11")
    log = json.loads((repo / "out.sarif").read_text(encoding="utf-8"))
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["DRA201"]
    assert summary.read_text(encoding="utf-8").startswith("## dralint")


def test_bad_output_file_spelling_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--output-file", "out.sarif", ".")
    assert code == 2 and "FORMAT=PATH" in err
    code, _, err = run(capsys, "--output-file", "yaml=out.yaml", ".")
    assert code == 2 and "unknown format 'yaml'" in err


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_progress_bar_starts_at_once_and_estimates_the_rest() -> None:
    stream, clock = _Tty(), _Clock()
    bar = Bar(stream, min_files=200, clock=clock)
    with progress.listening(bar):
        progress.start(400)
        assert "0/400 files" in stream.getvalue()  # drawn before any work is done
        assert "ETA" not in stream.getvalue()  # no rate yet: no guess
        clock.t += 2.0
        progress.advance(100)
        assert stream.getvalue().rsplit("\r", 2)[-2].startswith("[")
        assert "100/400 files  25%  ETA 0:06" in stream.getvalue()  # 2 s for 100: 6 s for 300
    assert stream.getvalue().endswith("\r\x1b[K")  # the line is left clean


def test_progress_bar_stays_away_from_short_runs() -> None:
    stream = _Tty()
    with progress.listening(Bar(stream, min_files=200)):
        progress.start(150)
        progress.advance(150)
    assert stream.getvalue() == ""


def test_eta_is_left_out_until_it_means_something() -> None:
    assert eta_text(1, 1000, 0.5) == ""
    assert eta_text(500, 1000, 30.0) == "ETA 0:30"


def test_check_draws_the_bar_on_a_terminal_for_a_large_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(210):
        (tmp_path / f"cm{i}.yaml").write_text(CLEAN.replace("name: c", f"name: c{i}"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERM", "xterm")
    fake = _Tty()
    monkeypatch.setattr("sys.stderr", fake)
    assert main(["check", "--isolated", "--no-cache", "-j", "1", "."]) == 0
    drawn = fake.getvalue()
    assert "/420 files" in drawn and "420/420 files 100%" in drawn


def test_migrate_draws_the_same_bar_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 205 clean files and one GPU pod: the bar covers the lint pass at once, then the file migrate changes
    for i in range(205):
        (tmp_path / f"cm{i}.yaml").write_text(CLEAN.replace("name: c", f"name: c{i}"), encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERM", "xterm")
    fake = _Tty()
    monkeypatch.setattr("sys.stderr", fake)
    main(["migrate", "--isolated", "--no-cache", "-j", "1", "--dry-run", "."])
    drawn = fake.getvalue()
    assert "0/206 files checked" in drawn and "206/206 files checked 100%" in drawn
    assert "206/206 files migrated 100%" in drawn


def test_migrate_draws_no_bar_when_told_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(205):
        (tmp_path / f"cm{i}.yaml").write_text(CLEAN.replace("name: c", f"name: c{i}"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERM", "xterm")
    fake = _Tty()
    monkeypatch.setattr("sys.stderr", fake)
    main(["migrate", "--isolated", "--no-cache", "--no-progress", "--dry-run", "."])
    assert "files" not in fake.getvalue()

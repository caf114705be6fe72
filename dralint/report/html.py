"""``dralint report --format html``: the migration readiness as one self-contained page.

The page is meant to be opened from a CI artifact or a mail attachment, offline: everything is in
the one file (inline CSS, inline SVG, no script, no font, no image, no link to load), and a
Content-Security-Policy that allows nothing else makes a stray reference fail closed instead of
reaching the network. The colours follow the reader's ``prefers-color-scheme``.

Every name on the page (namespaces, paths, object names, reasons) comes from the input and is
escaped; the only links are to the rule documentation.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from dralint import __version__
from dralint.report.readiness import NO_NAMESPACE, Group, Readiness
from dralint.report.sarif import help_uri

#: how many blocking rules the page lists (the text and JSON reports have all of them)
TOP_BLOCKERS = 10


@dataclass(frozen=True)
class Skip:
    """A workload ``dralint migrate`` leaves for a person, with its reason (from the planner)."""

    path: str
    line: int
    kind: str
    namespace: str | None
    name: str
    reason: str
    uses_dra: bool = False

    @property
    def directory(self) -> str:
        parent = PurePosixPath(self.path.replace("\\", "/")).parent.as_posix()
        return parent if parent not in ("", ".") else "."


@dataclass
class _Bar:
    """A group's GPU workloads split four ways; the segments add up to the group's GPU workloads."""

    dra: int = 0
    both: int = 0
    device_plugin: int = 0
    skipped: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.dra + self.both + self.device_plugin + self.skipped


_SEGMENTS = (("dra", "on DRA"), ("both", "both"), ("device_plugin", "device plugin"), ("skipped", "skipped"))


def _bar_of(g: Group, skips: list[Skip]) -> _Bar:
    skipped_both = sum(1 for s in skips if s.uses_dra)
    skipped_plain = len(skips) - skipped_both
    return _Bar(dra=g.dra - g.mixed, both=max(g.mixed - skipped_both, 0),
                device_plugin=max(g.legacy - g.mixed - skipped_plain, 0), skipped=len(skips))


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def _stacked(bar: _Bar) -> str:
    """A bar as flex segments; the counts are in the title and in the cells next to it."""
    if not bar.total:
        return '<div class="bar empty" title="no GPU workloads"></div>'
    segs = []
    for key, label in _SEGMENTS:
        n = getattr(bar, key)
        if n:
            segs.append(f'<span class="seg {key}" style="flex-grow:{n}" title="{_e(label)}: {n}"></span>')
    return f'<div class="bar" role="img" aria-label="{_e(_bar_text(bar))}">{"".join(segs)}</div>'


def _bar_text(bar: _Bar) -> str:
    return ", ".join(f"{label} {getattr(bar, key)}" for key, label in _SEGMENTS)


def _donut(done: int, total: int) -> str:
    """Overall progress as an inline SVG ring (no script, no external asset)."""
    pct = _pct(done, total)
    r = 42.0
    circ = 2 * 3.141592653589793 * r
    dash = circ * pct / 100
    label = f"{pct:.0f}%" if total else "n/a"
    return (f'<svg class="donut" viewBox="0 0 100 100" width="140" height="140" role="img" '
            f'aria-label="{_e(label)} of GPU workloads on DRA">'
            f'<circle cx="50" cy="50" r="{r}" class="ring-bg"/>'
            f'<circle cx="50" cy="50" r="{r}" class="ring" stroke-dasharray="{dash:.2f} {circ:.2f}" '
            f'transform="rotate(-90 50 50)"/>'
            f'<text x="50" y="56" text-anchor="middle" class="ring-text">{_e(label)}</text></svg>')


def _group_table(title: str, groups: dict[str, Group], skips_of: dict[str, list[Skip]]) -> str:
    if not groups:
        return ""
    rows = []
    for key in sorted(groups):
        g = groups[key]
        bar = _bar_of(g, skips_of.get(key, []))
        state = "ready" if g.ready else "not-ready"
        rows.append(
            f'<tr><th scope="row"><code>{_e(key)}</code></th><td class="barcell">{_stacked(bar)}</td>'
            f'<td class="num">{bar.dra}</td><td class="num">{bar.both}</td><td class="num">{bar.device_plugin}</td>'
            f'<td class="num">{bar.skipped}</td><td class="num">{g.errors}</td>'
            f'<td class="{state}">{"ready" if g.ready else "not ready"}</td></tr>')
    return (f'<section><h2>By {_e(title)}</h2><table class="groups"><thead><tr><th scope="col">{_e(title)}</th>'
            '<th scope="col">GPU workloads</th><th scope="col">on DRA</th><th scope="col">both</th>'
            '<th scope="col">device plugin</th><th scope="col">skipped</th><th scope="col">errors</th>'
            f'<th scope="col">state</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def _kind_table(r: Readiness) -> str:
    if not r.by_kind:
        return ""
    rows = []
    widest = max((g.legacy + g.dra - g.mixed for g in r.by_kind.values()), default=0) or 1
    for kind in sorted(r.by_kind):
        g = r.by_kind[kind]
        gpu = g.legacy + g.dra - g.mixed
        resources = ", ".join(f"<code>{_e(k)}</code> × {v}" for k, v in sorted(g.legacy_resources.items()))
        rows.append(
            f'<tr><th scope="row"><code>{_e(kind)}</code></th>'
            f'<td class="barcell"><div class="bar solo" title="{gpu} GPU workloads">'
            f'<span class="seg total" style="width:{_pct(gpu, widest):.1f}%"></span></div></td>'
            f'<td class="num">{g.workloads}</td><td class="num">{gpu}</td><td class="num">{g.legacy}</td>'
            f'<td class="num">{g.dra}</td><td>{resources or "—"}</td></tr>')
    return ('<section><h2>GPU requests per kind</h2><table class="kinds"><thead><tr><th scope="col">kind</th>'
            '<th scope="col">GPU workloads</th><th scope="col">workloads</th><th scope="col">with GPUs</th>'
            '<th scope="col">device plugin</th><th scope="col">DRA</th>'
            '<th scope="col">device-plugin resources (workloads)</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _blockers(r: Readiness) -> str:
    if not r.blockers:
        return '<section><h2>Top blockers</h2><p class="ok">No error finding blocks the move.</p></section>'
    items = []
    for b in r.blockers[:TOP_BLOCKERS]:
        examples = "".join(f"<li><code>{_e(x)}</code></li>" for x in b.examples)
        more = f'<li class="more">… and {b.count - len(b.examples)} more</li>' if b.count > len(b.examples) else ""
        items.append(f'<li><a href="{_e(help_uri(b.rule))}"><strong>{_e(b.rule)}</strong> {_e(b.name)}</a> '
                     f'<span class="count">{b.count}</span><ul class="examples">{examples}{more}</ul></li>')
    rest = len(r.blockers) - TOP_BLOCKERS
    tail = f'<p class="more">{rest} more blocking rules: see <code>dralint report</code>.</p>' if rest > 0 else ""
    return f'<section><h2>Top blockers</h2><ol class="blockers">{"".join(items)}</ol>{tail}</section>'


def _skips(skips: list[Skip]) -> str:
    if not skips:
        return ('<section><h2>Skipped by <code>dralint migrate</code></h2>'
                '<p class="ok">Nothing: <code>dralint migrate</code> can rewrite every device-plugin workload.</p>'
                '</section>')
    rows = "".join(
        f'<tr><td><code>{_e(s.path)}:{s.line}</code></td>'
        f'<td>{_e(s.kind)} <code>{_e((s.namespace + "/") if s.namespace else "")}{_e(s.name)}</code></td>'
        f'<td>{_e(s.reason)}</td></tr>'
        for s in sorted(skips, key=lambda s: (s.path, s.line)))
    return (f'<section><h2>Skipped by <code>dralint migrate</code> ({len(skips)})</h2><table class="skips"><thead>'
            '<tr><th scope="col">where</th><th scope="col">workload</th><th scope="col">why</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></section>')


_CSS = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --card: #f6f8fa; --dra: #1a7f37; --both: #9a6700; --plugin: #cf222e; --skipped: #8250df; --link: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --card: #151b23;
    --dra: #3fb950; --both: #d29922; --plugin: #f85149; --skipped: #ab7df8; --link: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; }
a { color: var(--link); } code { font: .9em ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.muted, .more { color: var(--muted); }
header.summary { display: flex; gap: 1.5rem; align-items: center; background: var(--card);
  border: 1px solid var(--line); border-radius: 12px; padding: 1rem 1.25rem; }
.verdict { font-size: 1.1rem; font-weight: 600; } .verdict.ready { color: var(--dra); }
.verdict.not-ready { color: var(--plugin); }
.donut .ring-bg { fill: none; stroke: var(--line); stroke-width: 12; }
.donut .ring { fill: none; stroke: var(--dra); stroke-width: 12; stroke-linecap: butt; }
.donut .ring-text { fill: var(--fg); font-size: 20px; font-weight: 700; }
.legend { display: flex; flex-wrap: wrap; gap: 1rem; margin: .5rem 0 0; padding: 0; list-style: none; }
.legend li::before { content: ""; display: inline-block; width: .8em; height: .8em; margin-right: .35em;
  border-radius: 2px; background: var(--c); vertical-align: -1px; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { color: var(--muted); font-weight: 600; font-size: .85rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.barcell { width: 32%; min-width: 10rem; }
.bar { display: flex; height: 14px; border-radius: 7px; overflow: hidden; background: var(--line); }
.bar.empty { opacity: .4; }
.seg { display: block; height: 100%; min-width: 3px; }
.seg.dra { background: var(--dra); } .seg.both { background: var(--both); }
.seg.device_plugin { background: var(--plugin); } .seg.skipped { background: var(--skipped); }
.seg.total { background: var(--link); }
.bar.solo { background: transparent; }
td.ready { color: var(--dra); } td.not-ready { color: var(--plugin); }
ol.blockers > li { margin: .4rem 0; } .count { display: inline-block; min-width: 1.8rem; padding: 0 .4rem;
  border-radius: 9px; background: var(--plugin); color: var(--bg); text-align: center; font-weight: 700; }
ul.examples { margin: .2rem 0 0; } .ok { color: var(--dra); }
footer { margin-top: 2rem; color: var(--muted); font-size: .85rem; }
"""


def render_html(r: Readiness, skips: list[Skip]) -> str:
    """The whole page. ``skips`` are the workloads ``dralint migrate`` would leave alone."""
    legacy = {(w["path"], w["object"]["kind"], w["object"]["namespace"], w["object"]["name"])
              for w in r.legacy_workloads}
    # owned objects (a Deployment's Pods in a cluster dump) are not counted by the readiness: skip them here too
    skips = [s for s in skips if (s.path, s.kind, s.namespace, s.name) in legacy]
    by_ns: dict[str, list[Skip]] = {}
    by_dir: dict[str, list[Skip]] = {}
    for s in skips:
        by_ns.setdefault(s.namespace or NO_NAMESPACE, []).append(s)
        by_dir.setdefault(s.directory, []).append(s)
    t = r.total
    total_bar = _bar_of(t, skips)
    ready = t.ready
    verdict = ("Ready: nothing uses device-plugin GPUs and nothing blocks the move." if ready else
               f"Not ready: {t.legacy} of {total_bar.total} GPU workloads still use the device plugin"
               + (f", {t.errors} error finding{'s' if t.errors != 1 else ''} block the move" if t.errors else "")
               + ".")
    legend = "".join(f'<li style="--c: var(--{ {"device_plugin": "plugin"}.get(k, k) })">{_e(label)}</li>'
                     for k, label in _SEGMENTS)
    body = [
        '<header class="summary">',
        _donut(total_bar.dra, total_bar.total),
        '<div><h1>DRA migration readiness</h1>',
        f'<p class="verdict {"ready" if ready else "not-ready"}">{_e(verdict)}</p>',
        f'<p class="muted">{r.files} files, {t.workloads} workloads, {total_bar.total} with GPUs: '
        f'{total_bar.dra} on DRA, {total_bar.both} on both, {total_bar.device_plugin} on the device plugin, '
        f'{total_bar.skipped} skipped by <code>dralint migrate</code>.</p>',
        _stacked(total_bar),
        f'<ul class="legend">{legend}</ul>',
        '</div></header>',
        _group_table("namespace", r.by_namespace, by_ns),
        _group_table("directory", r.by_directory, by_dir),
        _kind_table(r),
        _blockers(r),
        _skips(skips),
        f'<footer>Generated by dralint {_e(__version__)} (<code>dralint report --format html</code>). '
        '“on DRA”: the workload claims devices through DRA only; “both”: it has DRA claims and device-plugin '
        'requests; “skipped”: <code>dralint migrate</code> leaves it for a person (the reason is listed).</footer>',
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            # nothing may load: no script, no font, no image, no stylesheet other than the inline one
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            '<meta name="color-scheme" content="light dark">\n'
            "<title>DRA migration readiness</title>\n"
            f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(x for x in body if x) + "\n</body>\n</html>\n")

"""``dralint rules`` and ``dralint explain``: the rule list and one rule's documentation."""

from __future__ import annotations

import json
import sys

import click

from dralint.cli.options import EXIT_USAGE
from dralint.knowledge.catalog import catalog
from dralint.report.docs import all_rules, rule_markdown, rules_json, rules_table
from dralint.report.escaping import echo_err


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule."""
    metas = all_rules()
    if fmt == "json":
        click.echo(json.dumps(rules_json(metas), indent=2))
    elif fmt == "markdown":
        click.echo(rules_table(metas), nl=False)
    else:
        for m in metas:
            fix = "[*]" if m.fixable else "   "
            off = "" if m.enabled_by_default else " (off by default)"
            click.echo(f"{m.code}  {fix} {m.severity!s:<7} {m.name}{off}")


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a rule (by code or name)."""
    cat = catalog()
    meta = cat.get(code.upper()) or next((m for m in cat.values() if m.name == code), None)
    if meta is None:
        echo_err(f"dralint: error: unknown rule {code!r} (see `dralint rules`)")
        sys.exit(EXIT_USAGE)
    click.echo(rule_markdown(meta))

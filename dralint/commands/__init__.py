"""Commands that change files: ``dralint fix`` (and ``check --fix``) and ``dralint migrate``.

Each module exposes ``command()`` returning a click command; `dralint.cli` registers them.
"""

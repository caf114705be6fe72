"""Names vulture reports as unused that are used after all (run: `vulture`, configured in pyproject.toml).

Each entry says why it stays. The rule implementations registered with `@rule` are skipped through
`ignore_decorators` in pyproject.toml (the registry calls them, nothing names them). This file is
read by vulture only: never imported, excluded from ruff.
"""

_ = object()

# module-level __getattr__ (PEP 562): Python calls it for the lazily imported public API
__getattr__

# attributes set on third-party objects, read by those libraries (re2 options, ruamel's YAML(),
# PyYAML's constructor state between documents)
_.log_errors
_.preserve_quotes
_.constructed_objects

# PyYAML resolver protocol: the loader calls these hooks (the parameters are part of the signature)
_.descend_resolver
_.ascend_resolver
current_node
current_index

# io protocol: the HTTP refusal stub must behave like a readable stream for any caller
_.readinto

# cache statistics, read by tests/test_cache.py and by `--verbose` style diagnostics
_.misses

# typed aliases that document the three check signatures of the registry
ObjectCheck
FileCheck
ValuesCheck

# public helpers of the Python API, exercised by the tests (the CLI does not need them)
fix_source          # dralint.fix.loop: fix a string in memory
file_comments       # dralint.fix.splice: the comments of a file, for fix verification in tests
libraries           # dralint.cel.decls: every CEL library, for the checker property tests
normalize_release   # dralint.knowledge.drivers
custom_resource_kinds
validate_custom_resource
custom_resource_schema
POD_SPEC_PATHS      # dralint.knowledge.k8s: the pod-spec locations, the tests' oracle for workloads
_.data_minor        # dralint.knowledge.lifecycle: which data file a minor resolved to (tests)

# fields of records loaded from schemas/ (driver feature gates): typed in full so the data file
# is validated against them, even where no rule reads the field yet
unlocks
logging

# ReportOptions fields the CLI sets; no formatter reads them yet (see the note in the report)
show_source
verbose

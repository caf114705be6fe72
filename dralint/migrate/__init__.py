"""The migration from device-plugin resources to DRA claims: the planner records fixes (ordinary edits)
that the fix machinery applies and gates; `dralint.migrate.run` holds the entry points."""

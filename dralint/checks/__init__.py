"""The rules: the registry (`dralint.checks.registry`, where ``@rule`` binds a check function to its
``rules/`` folder) and one module per rule family."""

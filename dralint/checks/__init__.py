"""Rule implementations, one module per family; each function is registered with ``@rule``."""

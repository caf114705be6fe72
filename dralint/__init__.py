"""dralint: lint and migrate Kubernetes manifests for Dynamic Resource Allocation."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

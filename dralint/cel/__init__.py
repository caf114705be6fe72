"""A Kubernetes-faithful CEL environment for DRA device selectors.

Hand-written parser, type checker, cost estimator and evaluator (pure Python): exact positions for
every error, the ``device`` variable and the Kubernetes libraries declared with their real types,
and availability per target Kubernetes minor and feature gate from ``schemas/kubernetes/cel.yaml``.
See ``dralint/cel/env.py`` for the entry points. Inventory mode (`dralint.cel.inventory`) evaluates
claims against a cluster's ResourceSlices with it.
"""

from dralint.cel.env import Environment, EnvKey, Program, env_key, gate_enabled
from dralint.cel.values import CelError, Quantity, Semver

__all__ = ["CelError", "EnvKey", "Environment", "Program", "Quantity", "Semver", "env_key", "gate_enabled"]

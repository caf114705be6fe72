"""What changes per Kubernetes and driver release, read from ``schemas/`` and ``rules/``: object shapes,
the resource.k8s.io lifecycle and feature gates, JSON schemas, DRA drivers, the cluster profile,
device-plugin resource names and the rule catalog. Nothing here reads manifests."""

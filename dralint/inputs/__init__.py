"""From paths to objects the rules read: discovery and reading of files, YAML/JSON loading with
positions, `locate` (object path -> file position), the cross-file index and the DRA objects in it,
and offline Helm/kustomize rendering."""

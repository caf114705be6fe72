"""Applying fixes: edits as data, spliced into the original text in its own style, checked by the
gates, written atomically. `fix_files` / `fix_paths` (in `dralint.fix.loop`) are the entry points."""

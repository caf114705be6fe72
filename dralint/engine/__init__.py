"""The lint run: the rule runner, the pipeline from paths to a result (cache lookups, serial or
parallel workers), index summaries and their cache, suppressions, and the configuration."""

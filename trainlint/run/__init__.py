"""Running many files: in parallel processes, from the cache, findings packed between them."""

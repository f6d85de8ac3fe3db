"""Configuration: the files that set it, the keys they may set, the settings of a run."""

"""The engine, by job: the index of a run, the context rules see, the run, the settling."""

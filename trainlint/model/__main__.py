"""`python -m trainlint.model`: compile the schema trees again after changing a model."""

from trainlint.model.node import COMPILED
from trainlint.model.schema import compile_trees, dump

COMPILED.write_bytes(dump(compile_trees()))
print(f"wrote {COMPILED}")

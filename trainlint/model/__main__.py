"""`python -m trainlint.model`: compile the schema trees and the CRD rules again after
changing a model or the shipped CRDs."""

from trainlint.model.crd import write_compiled
from trainlint.model.node import COMPILED
from trainlint.model.schema import dump
from trainlint.model.trees import compile_trees

COMPILED.write_bytes(dump(compile_trees()))
print(f"wrote {COMPILED}")
write_compiled()

"""The CRD rules an object breaks, worked out once per object for the two rules that report
them: TL010 (rules of the object alone) and TL012 (transition rules, on an update)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainlint.document import Manifest
from trainlint.memo import PerObject

if TYPE_CHECKING:
    from trainlint.lookups import Lookups
    from trainlint.model.validations import Violation


#: The CRD rules one object breaks, shared by TL010 and TL012 while it is checked.
_VIOLATIONS: PerObject[list[Violation]] = PerObject("crd-violations")


def crd_violations(manifest: Manifest, ctx: Lookups) -> list[Violation]:
    """The CRD rules of the selected release that the object breaks, compared with its
    previous state when there is one."""
    def check() -> list[Violation]:
        from trainlint.model.validations import violations

        previous = ctx.previous(manifest)
        return violations(
            manifest.kind, ctx.trainer_version, manifest.body,
            previous.body if previous is not None else None, ctx.kubernetes_release,
        )

    return ctx.remember(_VIOLATIONS, manifest, check)

"""Checkstyle XML: one `<file>` per file checked, one `<error>` per finding."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from trainlint.report import Report, by_file, file_name, xml


def render(report: Report) -> str:
    root = ET.Element("checkstyle", version="4.3")
    for file, findings in by_file(report).items():
        element = ET.SubElement(root, "file", name=file_name(file))
        for finding in findings:
            ET.SubElement(
                element, "error", line=str(finding.span.line), column=str(finding.span.column),
                severity=finding.severity.value, message=finding.message,
                source=f"trainlint.{finding.code}.{finding.name}",
            )
    return xml(root)

"""JUnit XML: one test case per file and rule that fails, one passing case per clean file."""

from __future__ import annotations

from itertools import groupby
from xml.etree import ElementTree as ET

from trainlint.report import Report, by_file, file_name, xml


def render(report: Report) -> str:
    suite = ET.Element("testsuite", name="trainlint")
    cases = failures = 0
    for file, findings in by_file(report).items():
        name = file_name(file)
        if not findings:
            ET.SubElement(suite, "testcase", classname=name, name="trainlint")
            cases += 1
        ordered = sorted(findings, key=lambda finding: finding.code)
        for code, group in groupby(ordered, key=lambda finding: finding.code):
            found = list(group)
            case = ET.SubElement(suite, "testcase", classname=name, name=f"{code} {found[0].name}")
            failure = ET.SubElement(
                case, "failure", type=found[0].severity.value,
                message=f"{len(found)} problem{'s' if len(found) != 1 else ''} of {code}",
            )
            failure.text = "\n".join(
                f"{name}:{finding.span.line}:{finding.span.column}: {finding.message}"
                for finding in found
            )
            cases += 1
            failures += 1
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    root = ET.Element("testsuites", name="trainlint", tests=str(cases), failures=str(failures))
    root.append(suite)
    return xml(root)

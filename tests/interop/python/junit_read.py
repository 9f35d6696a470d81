"""Reads a JUnit XML report with junitparser, a reader this project did not write, and prints
what it found as one JSON document: the suites and every test case with its result."""

import json
import sys

from junitparser import JUnitXml, TestSuite

xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = []
for suite in suites:
    cases = []
    for case in suite:
        results = [
            {"kind": type(r).__name__, "message": r.message, "text": r.text}
            for r in case.result
        ]
        cases.append(
            {
                "name": case.name,
                "classname": case.classname,
                "time": case.time,
                "results": results,
            }
        )
    out.append(
        {
            "name": suite.name,
            "tests": suite.tests,
            "failures": suite.failures,
            "errors": suite.errors,
            "time": suite.time,
            "cases": cases,
        }
    )
json.dump(out, sys.stdout)

"""Findings for CI: SARIF 2.1.0 for code scanning, GitHub Actions workflow annotations.

analyze, check and diff turn their findings into weaklink.ci.results.Result records; sarif.py
and github.py render the same records, with the rules of weaklink.rules, located at the
defining source line from DWARF when there is one (sourceloc.py), else at the ELF image itself.
output.py is the --sarif FILE and --github options of the three commands. Each command's own
report (table and --json) stays with the command: weaklink.analyze.analysis, weaklink.check.report,
weaklink.diff.comparison.
"""

"""Reports for other tools: SARIF 2.1.0 for code scanning, GitHub Actions workflow annotations.

analyze, check and diff turn their findings into weaklink.report.results.Result records;
sarif.py and github.py render the same records, located at the defining source line from DWARF
when there is one (sourceloc.py), else at the ELF image itself.
"""

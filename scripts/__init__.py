"""Command lines over the library: each script is a `main()` that parses its arguments and makes one call.

Run one as `python scripts/NAME.py` (after `make setup`, which installs the repository editable) or as
`python -m scripts.NAME` from the repository root. Nothing here is imported by the package or its tests.
"""

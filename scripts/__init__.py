"""Command lines over the library: each script is a `main(argv=None)` that parses its arguments and makes one call
into `models/`, `evaluation/`, `training/`, `submission/` or `mock_api/`, where the logic lives and is tested.

Run one as `python scripts/NAME.py` (after `make setup`, which installs the repository editable) or as
`python -m scripts.NAME` from the repository root. The package never imports a script; tests of a command line
import its `main` and call it.
"""

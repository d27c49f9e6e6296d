"""The parts of ``docs/generate.py``: one module per kind of generated file."""

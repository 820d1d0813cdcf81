"""Make ``benches/loop_scenarios.py`` importable from the pytest-benchmark file.

The repo runs pytest with ``--import-mode=importlib``, which does not put the test file's
directory on ``sys.path``.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

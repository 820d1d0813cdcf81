"""The scripted model: :class:`MockModel` plays back scripts of steps, offline.

Used by tests (through :mod:`helikon.testing`, which re-exports it), by the examples and by the
sidecar's ``provider = "mock"`` models. Script steps and the script-file format are in
:mod:`helikon.providers.scripted.script` (see ``docs/guides/testing.md#script-files``).
"""

from helikon.providers.scripted.model import MockModel
from helikon.providers.scripted.script import (
    Call,
    Delay,
    Fail,
    Finish,
    Reasoning,
    Script,
    ScriptFile,
    Step,
    Text,
    Usage,
    step_from_json,
)

__all__ = [
    "Call",
    "Delay",
    "Fail",
    "Finish",
    "MockModel",
    "Reasoning",
    "Script",
    "ScriptFile",
    "Step",
    "Text",
    "Usage",
    "step_from_json",
]

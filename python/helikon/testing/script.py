"""The script steps of :class:`~helikon.testing.MockModel`, which live in
:mod:`helikon.providers.scripted.script` (re-exported here for tests)."""

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
    "Reasoning",
    "Script",
    "ScriptFile",
    "Step",
    "Text",
    "Usage",
    "step_from_json",
]

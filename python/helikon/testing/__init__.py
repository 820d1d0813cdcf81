"""Test doubles: :class:`MockModel`, :class:`ScriptedModel` (stateless, for concurrent
runs), their script steps and the wire replay server.

Never imported by library code.
"""

from helikon.testing.mock import MockModel
from helikon.testing.per_run import ScriptedModel
from helikon.testing.script import (
    Call,
    Delay,
    Fail,
    Finish,
    Reasoning,
    Script,
    ScriptFile,
    Text,
    Usage,
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
    "ScriptedModel",
    "Text",
    "Usage",
]

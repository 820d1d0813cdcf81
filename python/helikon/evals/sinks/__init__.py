"""Trace sinks: record a finished eval run for offline analysis.

:class:`SqliteTraceSink` uses the standard library; :class:`ParquetTraceSink` needs
``pyarrow`` (``pip install 'helikon[evals]'``) when constructed.
"""

from helikon.evals.sinks.base import TraceSink
from helikon.evals.sinks.parquet import ParquetTraceSink
from helikon.evals.sinks.sqlite import SqliteTraceSink

__all__ = ["ParquetTraceSink", "SqliteTraceSink", "TraceSink"]

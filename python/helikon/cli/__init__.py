"""The ``helikon`` command line (``cli`` extra)."""

"""turnfold's tests. A package so that ``tests.agents`` (real coding-agent CLIs) can also be run
as ``python -m tests.agents.drift``; the other test folders import nothing from here."""

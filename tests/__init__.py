"""turnfold's tests. A package, as its test folders are, so that tests import their shared
code as ``tests.X`` (``tests.formats.X``, ``tests.browser.labkit``) wherever they run, and
``tests.agents`` (real coding-agent CLIs) can also be run as ``python -m tests.agents.drift``."""

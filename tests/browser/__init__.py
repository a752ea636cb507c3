"""The tests in a real browser against a real JupyterLab: a package, so that they and
``benchmarks/browser.py`` import ``tests.browser.labkit`` by name, never by pytest's sys.path."""

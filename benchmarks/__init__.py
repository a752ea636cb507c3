"""Scripts that print ratios against a baseline measured in the same run (``python
benchmarks/<name>.py``): a package, so that they share ``benchmarks.load`` and the tests reuse a
benchmark's runs (``from benchmarks import frameworks``) by name, never by sys.path."""

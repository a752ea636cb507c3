"""The tests of each source format, and the runs and counters they share: a package, so that
they import one another as ``tests.formats.X`` wherever they run, never by pytest's sys.path."""

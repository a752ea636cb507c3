"""Eval-harness logs and trajectories (spec §11): files that record *runs*, often many in one.

Each module is one format, like the modules of :mod:`turnfold.formats`. A harness log may hold
many samples (an Inspect eval log holds one per sample and epoch): such a format reads a path
itself (``detect_path`` / ``read_path``, see :mod:`turnfold.formats`) and picks one sample with
``turnfold.load(path, sample=ID, epoch=N)``. :mod:`~turnfold.formats.harnesses.archive` reads
zip members in bounded memory for the formats that are archives.
"""

"""The page writer of ``turnfold render`` and static sites: :mod:`turnfold.atomic`, where it
lives beside the kept prices' writer, imported here under the name ``turnfold.cli`` uses."""

from turnfold.atomic import Part, keep_mode, write_whole

__all__ = ["Part", "keep_mode", "write_whole"]

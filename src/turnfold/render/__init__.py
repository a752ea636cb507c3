"""Renderers of the view model and the HTML fragments they share."""

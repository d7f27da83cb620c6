"""Reporters turn result data into text, JSON, GitHub annotations or Markdown."""

"""Prompt templates (package data). One file per message; variables declared in :mod:`debatrix.core.prompting`."""

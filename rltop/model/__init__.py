"""Runs and their series (columnar numpy), value formatting. No Textual, no Rich."""

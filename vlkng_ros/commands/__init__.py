"""Subcommands of the vlkng CLI, one module each."""

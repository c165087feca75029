"""Command-line interface: thin modules that parse, call the library, and render."""

"""Task files for lm-eval (YAML, with the helpers they name)."""

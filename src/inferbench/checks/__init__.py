"""inferbench.checks"""

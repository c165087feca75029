"""inferbench.config"""

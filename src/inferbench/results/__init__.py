"""inferbench.results"""

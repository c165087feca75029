"""inferbench.bench"""

"""inferbench.catalog"""

"""inferbench.matrix"""

"""inferbench.report"""

"""inferbench.sim"""

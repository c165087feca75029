"""inferbench.launch"""

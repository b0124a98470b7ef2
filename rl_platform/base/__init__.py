"""The vocabulary every layer shares: errors, module ids, metric and observation keys,
seed trees, devices, batch scaling, lifetime steps. No feature, no Ray.
"""

"""Capacity at a service level: the most load a deployment carries within latency targets."""

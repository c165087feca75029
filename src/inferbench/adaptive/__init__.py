"""Adaptive sweeps: measure only the points that can move the Pareto frontier.

Every point of a sweep is predicted by the calibrated simulator with an uncertainty taken
from the calibration's own held-out error; the points most likely to lie on or near the
frontier (total tok/s/GPU against interactivity, per model and sequence lengths) are
measured first, the calibration is refitted on what was measured, and the sweep stops once
every point left is, with the stated confidence, below the measured frontier or within a
tolerance of it. See docs/adaptive.md.
"""

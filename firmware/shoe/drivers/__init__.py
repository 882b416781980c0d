"""Sensor and actuator drivers. Each takes its bus/pin objects from the board; none builds hardware."""

"""Widgets and screens, one per module."""

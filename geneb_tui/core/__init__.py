"""The UI-free core of the dashboard: filters, queries, export, the fill protocol.

Nothing in this package imports Textual (a test keeps it so); the app calls it from workers.
"""

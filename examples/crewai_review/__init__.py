"""A content-review flow on CrewAI (a @human_feedback review and a router with two ends), stock and fixed (see README.md)."""

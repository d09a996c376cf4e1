"""A quiz tutor on pydantic-graph (its documented question graph), stock and fixed (see README.md)."""

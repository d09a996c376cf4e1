"""A support agent whose order cancellation needs a human's approval, on the OpenAI Agents SDK (see README.md)."""

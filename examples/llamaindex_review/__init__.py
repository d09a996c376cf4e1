"""A post-review workflow with a human in the loop, on LlamaIndex Workflows (see README.md)."""

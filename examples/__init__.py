"""Worked examples: real applications tested with chaos (``examples.<name>.app:<factory>``)."""

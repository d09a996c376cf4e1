"""An e-mail assistant with human approvals, in a stock and a fixed variant (see README.md)."""

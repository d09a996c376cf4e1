"""chaos in a team's own pytest suite: the chaos_run fixture on a graph, with a baseline."""

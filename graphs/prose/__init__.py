"""The prose modes' graph (the paper's judge and its ablations): each dimension's column of analyses and scores
(column.py, its nodes in nodes.py), the answers read (answers.py), the verdict from the orders a comparing
judgment is asked in (verdicts.py) and the panel that merges the dimensions (panel.py). The flow, the default
mode, is :mod:`debatrix.graphs.flow_nodes`; what every mode shares (the plan, the requests, the result and its
checks, the state, the node wrapper) stays in :mod:`debatrix.graphs`."""

"""The application around the judge: the Python API (``api``), the command line (``cli``) and its progress display,
the LangGraph deployment's graph factory (``deployment``) and the runtime tuning of long-lived processes."""

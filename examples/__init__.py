"""The project's example debates (YAML), installed with the package so the web page can offer one, and an
example of embedding the judge in an agent."""

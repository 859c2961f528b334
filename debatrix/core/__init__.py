"""The domain core: debates and results (models), settings, typed errors, dimensions, the mode registry, prompt
rendering, probabilities, token counting and the debate loader. It imports nothing from the rooms above it (the LLM
access, the graphs, the memories, the application)."""

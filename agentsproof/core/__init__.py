"""Layer 0: what every other layer stands on (errors, settings from the environment, safe reading of input files, process groups). Imports only the standard library, pydantic and yaml."""

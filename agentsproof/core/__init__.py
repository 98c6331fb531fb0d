"""Layer 0: what every other layer stands on — errors and exit codes, settings from the
environment, safe reading of input files, validation messages, process groups, removing a tree
without following links, the version. Imports only the standard library, pydantic and yaml."""

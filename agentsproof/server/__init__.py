"""The self-hosted AgentsProof server: ``agentsproof serve``.

Wire-compatible with the published ``agentsproof`` SDKs (PyPI/npm 1.0.6). Importing this
package is light; FastAPI and SQLAlchemy are imported by the modules that need them.
"""

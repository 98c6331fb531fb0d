"""The Alembic revisions of the server's schema, one module each, applied in order by ``db.migrate``."""

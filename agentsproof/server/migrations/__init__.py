"""Alembic migrations of the server database, run by ``db.open_db`` at start-up."""

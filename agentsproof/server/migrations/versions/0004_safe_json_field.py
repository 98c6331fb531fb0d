"""PostgreSQL: ``agentsproof_json_text(doc, key)``, the text of ``doc ->> key`` or NULL when
the stored JSON cannot be read (a lone surrogate or ``\\u0000`` escape stored by an older
server or another tool makes ``->>`` fail for the whole query). The runs page's metadata
filter uses it, so such a row just does not match instead of failing the page. SQLite
guards the same filter with ``json_valid`` and needs nothing here.

Revision ID: 0004
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE OR REPLACE FUNCTION agentsproof_json_text(doc json, key text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF json_typeof(doc) <> 'object' THEN
        RETURN NULL;
    END IF;
    RETURN doc ->> key;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    """Create ``agentsproof_json_text`` on PostgreSQL (nothing on SQLite)."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    """Drop ``agentsproof_json_text`` on PostgreSQL."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS agentsproof_json_text(json, text)")

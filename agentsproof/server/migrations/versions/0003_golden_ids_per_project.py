"""Golden ids per project: the key of ``goldens`` becomes (project_id, id), so project
``prod`` can import ``case-001`` after ``staging`` did, and another project's key cannot
tell that an id is taken. Every existing golden is kept as it was.

The table is rebuilt (SQLite cannot change a primary key in place): the old one is
renamed, a new one created with the same columns, the rows copied, the old one dropped.

Revision ID: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
COLUMNS = (
    "id",
    "project_id",
    "suite_slug",
    "name",
    "input",
    "goal",
    "expected_output",
    "expected_behavior",
    "success_criteria",
    "trace_assertions",
    "failure_modes",
    "custom_grader_ids",
    "approved",
    "created_at",
    "updated_at",
)


def _create(primary: sa.PrimaryKeyConstraint) -> None:
    op.create_table(
        "goldens",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("suite_slug", sa.String(100), nullable=True),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("input", sa.JSON, nullable=True),
        sa.Column("goal", sa.Text, nullable=True),
        sa.Column("expected_output", sa.JSON, nullable=True),
        sa.Column("expected_behavior", sa.Text, nullable=True),
        sa.Column("success_criteria", sa.JSON, nullable=True),
        sa.Column("trace_assertions", sa.JSON, nullable=True),
        sa.Column("failure_modes", sa.JSON, nullable=True),
        sa.Column("custom_grader_ids", sa.JSON, nullable=True),
        sa.Column("approved", sa.Boolean, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        primary,
    )
    op.create_index("ix_goldens_project_id", "goldens", ["project_id"])
    op.create_index("ix_goldens_suite_slug", "goldens", ["suite_slug"])


def _rebuild(primary: sa.PrimaryKeyConstraint) -> None:
    op.drop_index("ix_goldens_project_id", table_name="goldens")
    op.drop_index("ix_goldens_suite_slug", table_name="goldens")
    op.rename_table("goldens", "goldens_old")
    _create(primary)
    cols = ", ".join(COLUMNS)
    op.execute(f"INSERT INTO goldens ({cols}) SELECT {cols} FROM goldens_old")
    op.drop_table("goldens_old")


def upgrade() -> None:
    """Rebuild ``goldens`` keyed by (project_id, id)."""
    _rebuild(sa.PrimaryKeyConstraint("project_id", "id", name="pk_goldens_project_id"))


def downgrade() -> None:
    """Rebuild ``goldens`` keyed by id alone."""
    # only possible while no id is used by two projects (the old key was the id alone)
    _rebuild(sa.PrimaryKeyConstraint("id", name="pk_goldens_id"))

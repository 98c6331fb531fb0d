"""One run per client run id in a project: POST /runs with a clientRunId it has seen
answers with the existing run (an SDK retrying after a timeout, or `agentsproof sync`
uploading twice, never creates a duplicate).

Revision ID: 0002
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the unique index on (project_id, client_run_id) of ``runs``."""
    op.create_index("uq_runs_project_client_run_id", "runs", ["project_id", "client_run_id"], unique=True)


def downgrade() -> None:
    """Drop the unique index on (project_id, client_run_id) of ``runs``."""
    op.drop_index("uq_runs_project_client_run_id", table_name="runs")

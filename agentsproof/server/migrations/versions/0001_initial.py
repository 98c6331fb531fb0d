"""Initial schema: projects, keys, goldens, runs, steps, grades, proof runs, CLI results.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create every table of the first schema."""
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("slug", sa.String(100), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("prefix", sa.String(20), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
    )
    op.create_table(
        "goldens",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False, index=True),
        sa.Column("suite_slug", sa.String(100), nullable=True, index=True),
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
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False, index=True),
        sa.Column("client_run_id", sa.String(200), nullable=True),
        sa.Column("label", sa.String(500), nullable=True, index=True),
        sa.Column("input", sa.JSON, nullable=True),
        sa.Column("golden_id", sa.String(100), nullable=True, index=True),
        sa.Column("goal", sa.Text, nullable=True),
        sa.Column("expected_output", sa.JSON, nullable=True),
        sa.Column("expected_behavior", sa.Text, nullable=True),
        sa.Column("success_criteria", sa.JSON, nullable=True),
        sa.Column("trace_assertions", sa.JSON, nullable=True),
        sa.Column("failure_modes", sa.JSON, nullable=True),
        sa.Column("metadata", sa.JSON, nullable=True),
        sa.Column("output", sa.JSON, nullable=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("public_id", sa.String(64), nullable=True, unique=True),
        sa.Column("public_revoked", sa.Boolean, nullable=False),
        sa.Column("created_at", TS, nullable=False, index=True),
        sa.Column("completed_at", TS, nullable=True),
    )
    op.create_table(
        "steps",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=False, index=True),
        sa.Column("step_index", sa.Integer, nullable=False),
        sa.Column("type", sa.String(20), nullable=False),
        sa.Column("name", sa.String(500), nullable=True),
        sa.Column("input", sa.JSON, nullable=True),
        sa.Column("output", sa.JSON, nullable=True),
        sa.Column("latency_ms", sa.Float, nullable=True),
        sa.Column("token_count", sa.Integer, nullable=True),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("created_at", sa.String(64), nullable=True),
        sa.UniqueConstraint("run_id", "step_index", name="uq_steps_run_index"),
    )
    op.create_table(
        "grades",
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("status", sa.String(20), nullable=False, index=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("overall_score", sa.Float, nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "proof_runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False, index=True),
        sa.Column("suite_slug", sa.String(100), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("total_cases", sa.Integer, nullable=False),
        sa.Column("passed_cases", sa.Integer, nullable=True),
        sa.Column("failed_cases", sa.Integer, nullable=True),
        sa.Column("overall_score", sa.Float, nullable=True),
        sa.Column("public_id", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("completed_at", TS, nullable=True),
    )
    op.create_table(
        "proof_case_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("proof_run_id", sa.String(40), sa.ForeignKey("proof_runs.id"), nullable=False, index=True),
        sa.Column("golden_id", sa.String(100), nullable=False),
        sa.Column("run_id", sa.String(100), nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("failure_summary", sa.Text, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("proof_run_id", "golden_id", name="uq_case_golden"),
    )
    op.create_table(
        "cli_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("command", sa.String(20), nullable=False),
        sa.Column("plugin", sa.String(500), nullable=False),
        sa.Column("created_at", sa.String(64), nullable=False, index=True),
        sa.Column("source", sa.String(1000), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
    )


def downgrade() -> None:
    """Drop every table."""
    for table in ("cli_results", "proof_case_results", "proof_runs", "grades", "steps", "runs", "goldens", "api_keys", "projects"):
        op.drop_table(table)

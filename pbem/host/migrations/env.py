"""Alembic's entry: migrations run on the connection `pbem.host.migrations.upgrade` passes.

Alembic runs this file with its `context` set up; a plain import (a test walking every
module of pbem) finds no context and does nothing.
"""

from alembic import context

if getattr(context, "config", None) is not None:
    connection = context.config.attributes["connection"]
    context.configure(connection=connection, render_as_batch=True, transaction_per_migration=False)
    with context.begin_transaction():
        context.run_migrations()

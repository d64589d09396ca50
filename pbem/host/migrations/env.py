"""Alembic's entry: migrations run on the connection `pbem.host.migrations.upgrade` passes."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True, transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()

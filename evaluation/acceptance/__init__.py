"""Builders of the package's acceptance data (never imported at inference): the bundled sample (`sample_data`), the
public-data SQL questions (`sql_acceptance`) and the hostile SQL for the read-only guard (`hostile_sql`, its
building blocks `hostile_sql_parts`, the runner and audit `hostile_sql_run`)."""

-- The sample pipelines' warehouse in the compose stack: database "analytics" next to Airflow's own.
-- The "warehouse" Airflow connection points here; in production it points at Snowflake or Postgres.
CREATE DATABASE analytics;

-- Skipped by dbt: its upstream model broken fails.
select * from {{ ref('broken') }}

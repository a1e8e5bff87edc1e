-- Skipped by dbt build: a test of Orders_By_Day fails.
select count(*) as days from {{ ref('Orders_By_Day') }}

-- A mixed-case model name: DuckDB keeps the case, the lineage names it in lower case.
select order_date, count(*) as order_count, sum(amount) as revenue
from {{ source('staging', 'orders') }}
group by order_date

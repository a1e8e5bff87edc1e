select 1 as order_id, cast('2024-06-01' as date) as order_date, 10.5 as amount
union all
select 2 as order_id, cast('2024-06-01' as date) as order_date, 4.5 as amount

{#- fail_on_purpose (the DAG param fail_stage=fct_daily_orders) makes the model fail, to show how a failed
    dbt model reaches the lineage: failed upstream of the mart, under the Airflow task that ran it. The
    sources are referenced first, so the failing model still depends on (and reads) them. -#}
{%- set orders = source('staging', 'stg_orders') -%}
{%- set contacts = source('staging', 'stg_contacts') -%}
{%- if var('fail_on_purpose', false) %}
select error('fct_daily_orders failed on purpose: the DAG run was triggered with fail_stage=''fct_daily_orders'''
             || ' (trigger it with fail_stage=''none'' to run normally)') as order_date
{%- else %}
select o.order_date,
       coalesce(c.account_id, 'unknown') as account_id,
       count(o.order_id) as order_count,
       count(distinct o.customer_id) as customer_count,
       cast(sum(o.total_amount_usd) as decimal(14, 2)) as total_revenue_usd,
       cast(avg(o.total_amount_usd) as decimal(12, 2)) as avg_order_value_usd
from {{ orders }} as o
left join {{ contacts }} as c on c.contact_id = o.customer_id
where o.status = 'completed'
group by o.order_date, coalesce(c.account_id, 'unknown')
{%- endif %}

select order_date, sum(amount) as total from {{ ref('orders') }} group by order_date

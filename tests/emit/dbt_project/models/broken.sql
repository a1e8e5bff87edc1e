-- Fails: the column does not exist. Copied from postgres://etl:hunter2@db.example.com/shop (redacted).
select no_such_column from {{ source('staging', 'orders') }}

{#- The schema a model names is the schema it is built in ("marts", not "<target schema>_marts"), so the
    tables are analytics.marts.* as in the rest of the warehouse. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
  {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}

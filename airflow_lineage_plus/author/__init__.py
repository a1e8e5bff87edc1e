"""Author: what a task declares about its lineage, and what it records while it runs.

:mod:`.spec` (the declaration types), :mod:`.validation` (one rule per function, at parse time),
:mod:`.build` (a declaration as the provider's ``OperatorLineage``), :mod:`.decorators` (``@lineage``),
:mod:`.mixins` (``LineageMixin``, the provider's operator lineage contract), :mod:`.runtime` (facts
recorded inside a task) and :mod:`.profiling` (figures computed from data). Dataset identity is the
shared :mod:`airflow_lineage_plus.datasets`.
"""

"""Deliver: what happens to an event after the provider built it and before a backend stores it.

:mod:`.serialize` turns events into JSON, :mod:`.limits` and :mod:`.redaction` are the rules applied to
every string and facet, :mod:`.event_budget` applies them to a whole event, :mod:`.event_log_transport`
appends events to the event log (and forwards them), :mod:`.replay` re-sends what a backend missed.
Nothing here imports the author or emit stages.
"""

"""The projections at work: the live runner (``runner``: ``vaeo projector``), rebuilds
(``rebuild``: ``vaeo projections rebuild NAME``) and the listing of every tracked reader
(``listing``: ``vaeo projections list``). The pure execution planner is ``projections/plan.py``;
the consume-and-track machinery they share with the other readers is ``services/processes/consuming.py``.
"""

"""The optional model classifier, one concern per module: ``call`` (the deadline-bounded
request and the decision it yields), ``config`` (the typed ``classifier:`` settings),
``contract`` (the prompt and the answer it accepts) and ``endpoint`` (provider, key and
the cached HTTP client). Nothing here imports Hermes."""

"""The production benchmarks (`make bench-production`, `python -m bench.production`): the shape docs/deploy.md
describes — PostgreSQL, Redis, several Daphne processes and run workers — measured as bench/ measures one process,
each figure against a floor measured in the same run."""

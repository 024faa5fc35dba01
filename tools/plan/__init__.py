"""The offline plan: run the real program under mocks, compare two plans, judge what the engine would do."""

"""HGRN2: its forget gates and its recurrence."""

"""The vocabulary every kernel shares: result codes, tolerances, record layouts, the
shape table's layout and the clock."""

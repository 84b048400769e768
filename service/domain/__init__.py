"""The domain core: dice and patterns, variants as data, rules with options and house-rule
overrides, scoring of hands and sheets. Pure Python: imports neither Flask nor numpy."""

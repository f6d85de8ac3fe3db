"""One module per rule, and `registry`, which lists them (`trainlint.rule.listed_rules`)."""

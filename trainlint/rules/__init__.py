"""One module per rule; `trainlint.rule.all_rules` imports them all."""

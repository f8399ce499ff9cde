# Unit suites of lib/insights/ (one Check program each; sources by name).
# the rules at, just under and just over each threshold
UNIT_SUITES += %reldir%/check_rules

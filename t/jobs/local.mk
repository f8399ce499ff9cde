# Unit suites of lib/jobs/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_sandbox

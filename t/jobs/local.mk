# Unit suites of lib/jobs/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_sandbox
# the sandbox's statement PDF
UNIT_SUITES += %reldir%/check_pdf
# the portal connector's answer validation
UNIT_SUITES += %reldir%/check_portal
# conversations: coroutines on the runner's libcurl multi handle
UNIT_SUITES += %reldir%/check_conv

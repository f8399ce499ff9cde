# Unit suites of lib/core/ (one Check program each; sources by name).
UNIT_SUITES += %reldir%/check_arena %reldir%/check_clock %reldir%/check_config %reldir%/check_crypto %reldir%/check_cursor %reldir%/check_errors %reldir%/check_http %reldir%/check_json %reldir%/check_jwt %reldir%/check_log %reldir%/check_router %reldir%/check_seal %reldir%/check_urlsafe %reldir%/check_validate %reldir%/check_vault
# core/money: currencies, decimal amounts, minor units
UNIT_SUITES += %reldir%/check_money
# core/nodump: no core dump from a process holding secrets
UNIT_SUITES += %reldir%/check_nodump
# core/meter: the usage counters of a worker
UNIT_SUITES += %reldir%/check_meter
